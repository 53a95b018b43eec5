// Isolation between sessions and from the server's host: new memory is zeroed, builds cannot
// read the server's files, forged image and sampler handles are refused, and one session's
// compiler unload does not reach another's builds.
#include <CL/cl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cl_checks.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "isolation_environment.hpp"
#include "temp_directory.hpp"

namespace troupe::remote_test {
namespace {

class remote_isolation : public isolation_test {};

const char* const small_kernel = "__kernel void k(__global int* x) { x[0] = 1; }\n";

std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

cl_build_status build_status(cl_program program, cl_device_id device) {
  cl_build_status status = CL_BUILD_NONE;
  EXPECT_CL(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status,
                                  nullptr));
  return status;
}

program_ref from_source(const side& s, const std::string& source) {
  const char* text = source.c_str();
  cl_int status = CL_SUCCESS;
  program_ref program(clCreateProgramWithSource(s.context, 1, &text, nullptr, &status));
  EXPECT_CL(status);
  return program;
}

TEST_F(remote_isolation, new_buffers_and_images_never_show_what_another_session_freed) {
  constexpr int rounds = 8;
  for (std::size_t size : {std::size_t{256}, std::size_t{4096}, std::size_t{65536}}) {
    SCOPED_TRACE(size);
    std::vector<std::uint8_t> pattern(size, 0xa5);
    for (int round = 0; round < rounds; ++round) {
      {
        auto used = make_buffer(first.context, size);
        ASSERT_CL(clEnqueueWriteBuffer(first.queue, used, CL_TRUE, 0, size, pattern.data(), 0,
                                       nullptr, nullptr));
        ASSERT_CL(clFinish(first.queue));
      }
      for (int again = 0; again < 4; ++again) {
        auto fresh = make_buffer(second.context, size);
        std::vector<std::uint8_t> seen(size, 0xff);
        ASSERT_CL(clEnqueueReadBuffer(second.queue, fresh, CL_TRUE, 0, size, seen.data(), 0,
                                      nullptr, nullptr));
        ASSERT_EQ(std::count(seen.begin(), seen.end(), 0), static_cast<long>(size))
            << "round " << round << ": a new buffer shows bytes another session wrote";
      }
    }
  }
  // Images too: 64 x 64 RGBA8 pixels.
  const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = desc.image_height = 64;
  const std::size_t origin[3] = {0, 0, 0}, region[3] = {64, 64, 1}, bytes = 64 * 64 * 4;
  std::vector<std::uint8_t> pattern(bytes, 0x5a);
  for (int round = 0; round < rounds; ++round) {
    cl_int status = CL_SUCCESS;
    {
      mem_ref used(clCreateImage(first.context, 0, &format, &desc, nullptr, &status));
      ASSERT_CL(status);
      ASSERT_CL(clEnqueueWriteImage(first.queue, used, CL_TRUE, origin, region, 0, 0,
                                    pattern.data(), 0, nullptr, nullptr));
    }
    mem_ref fresh(clCreateImage(second.context, 0, &format, &desc, nullptr, &status));
    ASSERT_CL(status);
    std::vector<std::uint8_t> seen(bytes, 0xff);
    ASSERT_CL(clEnqueueReadImage(second.queue, fresh, CL_TRUE, origin, region, 0, 0, seen.data(), 0,
                                 nullptr, nullptr));
    ASSERT_EQ(std::count(seen.begin(), seen.end(), 0), static_cast<long>(bytes))
        << "round " << round << ": a new image shows bytes another session wrote";
  }
}

TEST_F(remote_isolation, build_options_that_could_read_server_files_are_refused_with_a_log) {
  temp_directory headers;
  std::ofstream(headers.path() / "secret.h") << "#define SECRET 42\n";
  const std::string folder = headers.path().string();
  // Each option string, and the option its build log must name.
  // (-I names the client's folders, whose files the driver sends: see the -I tests below.)
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"-isystem " + folder, "-isystem"},
      {"-iquote " + folder, "-iquote"},
      {"-idirafter " + folder, "-idirafter"},
      {"-include " + folder + "/secret.h", "-include"},
      {"-imacros " + folder + "/secret.h", "-imacros"},
      {"-x c", "-x"},
      {"--sysroot=" + folder, "--sysroot=" + folder},
      {"-Wp,-include," + folder + "/secret.h", "-Wp,-include,"},
      {"-cl-std=CL1.2 " + folder + "/secret.h", folder + "/secret.h"},
      {"@" + folder + "/secret.h", "@" + folder},
      {"-D X -isystem" + folder, "-isystem" + folder},
      {"-I" + folder + " -iquote " + folder, "-iquote"},
      {"-DSAFE " + folder, folder},
  };
  for (const auto& [options, named] : refused) {
    SCOPED_TRACE(options);
    auto program = from_source(first, std::string("#include \"secret.h\"\n") + small_kernel);
    EXPECT_EQ(clBuildProgram(program, 1, &first.device, options.c_str(), nullptr, nullptr),
              CL_INVALID_BUILD_OPTIONS);
    auto log = build_log(program, first.device);
    EXPECT_NE(log.find("refused"), std::string::npos) << log;
    EXPECT_NE(log.find("'" + named), std::string::npos) << log;
    EXPECT_EQ(build_status(program, first.device), CL_BUILD_ERROR);
  }
  // Compiles and links are held to the same options.
  auto compiled = from_source(first, small_kernel);
  EXPECT_EQ(clCompileProgram(compiled, 1, &first.device, refused.front().first.c_str(), 0, nullptr,
                             nullptr, nullptr, nullptr),
            CL_INVALID_COMPILER_OPTIONS);
  ASSERT_CL(
      clCompileProgram(compiled, 1, &first.device, "", 0, nullptr, nullptr, nullptr, nullptr));
  cl_program inputs[] = {compiled};
  cl_int status = CL_SUCCESS;
  program_ref linked(clLinkProgram(first.context, 1, &first.device, refused.front().first.c_str(),
                                   1, inputs, nullptr, nullptr, &status));
  EXPECT_EQ(status, CL_INVALID_LINKER_OPTIONS) << cl_error_name(status);
  // The options OpenCL defines for builds are served (PoCL itself refuses -U).
  auto program = build_program(first, std::string("__kernel void k(__global int* x) { x[0] = N; }"),
                               "-DN=3 -D M=2 -cl-mad-enable -cl-std=CL1.2 -w -Werror -g");
  EXPECT_NE(program.get(), nullptr);
}

TEST_F(remote_isolation, sources_that_could_read_server_files_are_refused_with_a_log) {
  temp_directory headers;
  const std::string secret = (headers.path() / "secret.h").string();
  std::ofstream(secret) << "#define SECRET 42\n";
  const std::string quoted = "\"" + secret + "\"";
  const std::string kernel = "__kernel void k(__global int* x) { x[0] = SECRET; }\n";
  const std::vector<std::string> refused = {
      "#include " + quoted + "\n",
      "#include <" + secret + ">\n",
      "  #  include " + quoted + " // spaced\n",
      "%:include " + quoted + "\n",
      "?\?=include " + quoted + "\n",
      "#inc\\\nlude " + quoted + "\n",
      "#/* comment */include " + quoted + "\n",
      "#define WHERE " + quoted + "\n#include WHERE\n",
      "#include \"../../../../../../.." + secret + "\"\n",
      "#include_next " + quoted + "\n",
      "#import " + quoted + "\n",
      "#if __has_include(" + quoted + ")\n#define SECRET 1\n#endif\n",
  };
  for (const auto& lines : refused) {
    SCOPED_TRACE(lines);
    auto program = from_source(first, lines + kernel);
    EXPECT_EQ(clBuildProgram(program, 1, &first.device, "", nullptr, nullptr),
              CL_BUILD_PROGRAM_FAILURE);
    auto log = build_log(program, first.device);
    EXPECT_NE(log.find("refused"), std::string::npos) << log;
    EXPECT_NE(log.find("line "), std::string::npos) << log;
    EXPECT_EQ(build_status(program, first.device), CL_BUILD_ERROR);
  }
  // Include-like text in comments and strings is no directive, and an input header given to
  // clCompileProgram is what its name includes.
  // A relative name is looked for beside the source too, which for a source given as text is
  // the server's working folder: troupe-deviced's is an empty one of its own, not the folder it
  // was started in (this test's).
  const std::string beside = "troupe-isolation-beside-" + std::to_string(::getpid()) + ".h";
  std::ofstream(beside) << "#define SECRET 4242\n";
  auto nearby = from_source(first, "#include \"" + beside + "\"\n" + kernel);
  EXPECT_EQ(clBuildProgram(nearby, 1, &first.device, "", nullptr, nullptr),
            CL_BUILD_PROGRAM_FAILURE);
  EXPECT_EQ(build_log(nearby, first.device).find("4242"), std::string::npos);
  std::filesystem::remove(beside);
  auto harmless = build_program(first, "// #include " + quoted + "\n/* #include " + quoted +
                                           " */\n#define SECRET 7\n" + kernel);
  EXPECT_NE(harmless.get(), nullptr);
  auto header = from_source(first, "#define SECRET 5\n");
  auto includer = from_source(first, "#include \"given.h\"\n" + kernel);
  cl_program header_programs[] = {header};
  const char* good_names[] = {"given.h"};
  EXPECT_CL(clCompileProgram(includer, 1, &first.device, "", 1, header_programs, good_names,
                             nullptr, nullptr));
  // A header name that leaves the compiler's folder is refused.
  const char* bad_names[] = {"../given.h"};
  auto escaping = from_source(first, "#include \"../given.h\"\n" + kernel);
  EXPECT_EQ(clCompileProgram(escaping, 1, &first.device, "", 1, header_programs, bad_names, nullptr,
                             nullptr),
            CL_INVALID_VALUE);
}

// Runs `program`'s kernel k(__global int*) once on `s` and gives what it wrote.
cl_int run_once(const side& s, cl_program program) {
  auto kernel = make_kernel(program, "k");
  auto out = make_buffer(s.context, sizeof(cl_int));
  EXPECT_CL(set_arg(kernel, 0, out.get()));
  const std::size_t one = 1;
  EXPECT_CL(
      clEnqueueNDRangeKernel(s.queue, kernel, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
  cl_int value = -1;
  EXPECT_CL(
      clEnqueueReadBuffer(s.queue, out, CL_TRUE, 0, sizeof value, &value, 0, nullptr, nullptr));
  return value;
}

// The test's working folder, for the duration of one test.
class working_folder {
 public:
  explicit working_folder(const std::filesystem::path& path)
      : before_(std::filesystem::current_path()) {
    std::filesystem::current_path(path);
  }
  working_folder(const working_folder&) = delete;
  working_folder& operator=(const working_folder&) = delete;
  ~working_folder() { std::filesystem::current_path(before_); }

 private:
  std::filesystem::path before_;
};

TEST_F(remote_isolation, minus_i_folders_are_the_clients_and_searched_as_a_compiler_does) {
  // Relative folders, from the client's working folder: the server, working in an empty
  // folder of its own, could not find them; only the files the driver sends can be found.
  temp_directory client;
  working_folder inside(client.path());
  std::filesystem::create_directories("first/sub");
  std::filesystem::create_directories("second folder");
  std::ofstream("first/value.h") << "#define VALUE 42\n";
  std::ofstream("first/sub/inner.h") << "#include \"leaf.h\"\n";  // beside inner.h
  std::ofstream("first/sub/leaf.h") << "#define LEAF 5\n";
  std::ofstream("second folder/value.h") << "#define VALUE 99\n";  // hidden by first/
  std::ofstream("second folder/only_second.h") << "#define ONLY_SECOND 7\n";
  const std::string source =
      "#include \"value.h\"\n#include <sub/inner.h>\n#include \"only_second.h\"\n"
      "#ifdef NEVER\n#include <stddef.h>\n#endif\n"
      "__kernel void k(__global int* x) { x[0] = VALUE + 1000 * LEAF + 100000 * ONLY_SECOND; }\n";
  auto program = build_program(first, source, "-Dunused -I first -I\"second folder\" -w");
  ASSERT_NE(program.get(), nullptr);
  EXPECT_EQ(run_once(first, program), 42 + 1000 * 5 + 100000 * 7);
  // clCompileProgram takes -I folders as clBuildProgram does.
  auto compiled = from_source(first, source);
  EXPECT_CL(clCompileProgram(compiled, 1, &first.device, "-Ifirst -I \"second folder\"", 0, nullptr,
                             nullptr, nullptr, nullptr));
  // An include found in no folder fails the build as the compiler fails it, with its log.
  auto missing = from_source(first, "#include \"nowhere.h\"\n" + std::string(small_kernel));
  EXPECT_EQ(clBuildProgram(missing, 1, &first.device, "-I first", nullptr, nullptr),
            CL_BUILD_PROGRAM_FAILURE);
  EXPECT_NE(build_log(missing, first.device).find("nowhere.h"), std::string::npos);
  // A file sent from a folder is held to the source's rules.
  std::ofstream("first/escape.h") << "#include \"/etc/hostname\"\n";
  auto escaping = from_source(first, "#include \"escape.h\"\n" + std::string(small_kernel));
  EXPECT_EQ(clBuildProgram(escaping, 1, &first.device, "-I first", nullptr, nullptr),
            CL_BUILD_PROGRAM_FAILURE);
  auto log = build_log(escaping, first.device);
  EXPECT_NE(log.find("refused"), std::string::npos) << log;
  EXPECT_NE(log.find("escape.h"), std::string::npos) << log;
  // More than the server takes in one build fails it, saying so.
  std::ofstream("first/huge.h") << std::string(std::size_t{33} << 20, ' ');
  auto huge = from_source(first, "#include \"huge.h\"\n" + std::string(small_kernel));
  EXPECT_EQ(clBuildProgram(huge, 1, &first.device, "-I first", nullptr, nullptr),
            CL_INVALID_BUILD_OPTIONS);
  log = build_log(huge, first.device);
  EXPECT_NE(log.find("-I folders hold more than"), std::string::npos) << log;
}

TEST_F(remote_isolation, bytes_for_an_image_or_sampler_without_argument_info_are_refused) {
  // Built on the local device without argument information: its binary has none either.
  const std::string source = R"(
__kernel void sample(__read_only image2d_t image, sampler_t sampler, __global uint4* out) {
  out[0] = read_imageui(image, sampler, (int2)(0, 0));
}
)";
  auto built_here = build_program(local, source);
  ASSERT_NE(built_here.get(), nullptr);
  std::size_t size = 0;
  ASSERT_CL(clGetProgramInfo(built_here, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
  std::vector<unsigned char> binary(size);
  unsigned char* target = binary.data();
  ASSERT_CL(clGetProgramInfo(built_here, CL_PROGRAM_BINARIES, sizeof target, &target, nullptr));
  const unsigned char* bytes = binary.data();
  cl_int status = CL_SUCCESS;
  program_ref program(
      clCreateProgramWithBinary(first.context, 1, &first.device, &size, &bytes, nullptr, &status));
  ASSERT_CL(status);
  ASSERT_CL(clBuildProgram(program, 1, &first.device, "", nullptr, nullptr));
  auto kernel = make_kernel(program, "sample");
  // PoCL keeps argument information in its binaries: there the server knows every argument's
  // kind and this path is not taken. Drivers that drop it (NVIDIA's, for binaries) take it.
  char name[64] = {};
  if (clGetKernelArgInfo(kernel, 0, CL_KERNEL_ARG_TYPE_NAME, sizeof name, name, nullptr) !=
      CL_KERNEL_ARG_INFO_NOT_AVAILABLE) {
    GTEST_SKIP() << "the served kernel has argument information (argument 0 is " << name
                 << "): no kernel without it to check here";
  }
  // Pointers of the client's choosing, sent as bytes: OpenCL would read them as handles.
  for (cl_uint index : {0u, 1u}) {
    SCOPED_TRACE(index);
    void* forged = reinterpret_cast<void*>(std::uintptr_t{0x1000});
    ASSERT_CL(clSetKernelArg(kernel, index, sizeof forged, &forged));  // checked by the server
    EXPECT_EQ(clFinish(first.queue), CL_INVALID_ARG_VALUE);
  }
  // Real objects are taken, and the kernel runs.
  const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT32};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = desc.image_height = 1;
  const cl_uint pixel[4] = {1, 2, 3, 4};
  mem_ref image(clCreateImage(first.context, CL_MEM_COPY_HOST_PTR, &format, &desc,
                              const_cast<cl_uint*>(pixel), &status));
  ASSERT_CL(status);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  sampler_ref sampler(clCreateSampler(first.context, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE,
                                      CL_FILTER_NEAREST, &status));
#pragma GCC diagnostic pop
  ASSERT_CL(status);
  auto out = make_buffer(first.context, sizeof pixel);
  ASSERT_CL(set_arg(kernel, 0, image.get()));
  ASSERT_CL(set_arg(kernel, 1, sampler.get()));
  ASSERT_CL(set_arg(kernel, 2, out.get()));
  const std::size_t one = 1;
  ASSERT_CL(
      clEnqueueNDRangeKernel(first.queue, kernel, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
  cl_uint back[4] = {};
  ASSERT_CL(
      clEnqueueReadBuffer(first.queue, out, CL_TRUE, 0, sizeof back, back, 0, nullptr, nullptr));
  EXPECT_TRUE(std::equal(back, back + 4, pixel));
}

TEST_F(remote_isolation, unloading_the_compiler_in_one_session_leaves_the_others_builds_alone) {
  std::atomic<bool> building{true};
  std::atomic<int> unloads{0}, failed_unloads{0};
  std::thread unloader([&] {
    while (building) {
      if (clUnloadPlatformCompiler(first.platform) != CL_SUCCESS) ++failed_unloads;
      ++unloads;
    }
  });
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE(round);
    // A new source each round: a cached build would not need the compiler.
    auto program = build_program(second, "__kernel void k(__global int* x) { x[0] = " +
                                             std::to_string(1000 + round) + "; }");
    ASSERT_NE(program.get(), nullptr);
    auto kernel = make_kernel(program, "k");
    auto out = make_buffer(second.context, sizeof(cl_int));
    ASSERT_CL(set_arg(kernel, 0, out.get()));
    const std::size_t one = 1;
    ASSERT_CL(clEnqueueNDRangeKernel(second.queue, kernel, 1, nullptr, &one, nullptr, 0, nullptr,
                                     nullptr));
    cl_int value = 0;
    ASSERT_CL(clEnqueueReadBuffer(second.queue, out, CL_TRUE, 0, sizeof value, &value, 0, nullptr,
                                  nullptr));
    EXPECT_EQ(value, 1000 + round);
  }
  building = false;
  unloader.join();
  EXPECT_GT(unloads.load(), 0);
  EXPECT_EQ(failed_unloads.load(), 0) << "of " << unloads.load() << " unloads";
  // The unloading session builds afterwards too.
  EXPECT_NE(build_program(first, small_kernel).get(), nullptr);
}

}  // namespace
}  // namespace troupe::remote_test
