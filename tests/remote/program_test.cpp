// Programs and kernels: builds, binaries, compile and link, kernel and argument info, and
// launches with every kind of argument, compared with the local PoCL and the CPU.
#include <array>
#include <cstring>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "cl_checks.hpp"
#include "cl_info.hpp"
#include "cl_objects.hpp"
#include "cl_ref.hpp"
#include "common_kernels.hpp"
#include "remote_fixture.hpp"
#include "side.hpp"

namespace troupe::remote_test {
namespace {

class remote_program : public remote_test {};

// Queries with an extra argument (a device, an argument index), as one value or a string.
template <class T, class Query>
T extra_info(Query query) {
  T value{};
  const cl_int status = query(sizeof value, &value, nullptr);
  EXPECT_EQ(status, CL_SUCCESS) << cl_error_name(status);
  return value;
}
template <class Query>
std::string extra_string(Query query) {
  std::size_t size = 0;
  cl_int status = query(0, nullptr, &size);
  EXPECT_EQ(status, CL_SUCCESS) << cl_error_name(status);
  std::string text(size, '\0');
  if (size > 0) EXPECT_CL(query(size, text.data(), nullptr));
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}
auto build_query(cl_program program, cl_device_id device, cl_program_build_info param) {
  return [=](std::size_t size, void* value, std::size_t* size_ret) {
    return clGetProgramBuildInfo(program, device, param, size, value, size_ret);
  };
}
auto work_group_query(cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param) {
  return [=](std::size_t size, void* value, std::size_t* size_ret) {
    return clGetKernelWorkGroupInfo(kernel, device, param, size, value, size_ret);
  };
}
auto arg_query(cl_kernel kernel, cl_uint index, cl_kernel_arg_info param) {
  return [=](std::size_t size, void* value, std::size_t* size_ret) {
    return clGetKernelArgInfo(kernel, index, param, size, value, size_ret);
  };
}

// Runs add(a, b) -> c over `count` floats with `program` and checks the sums.
void check_vector_add(const side& s, cl_program program, std::size_t count = 1000) {
  auto kernel = make_kernel(program, "add");
  std::vector<float> a(count), b(count), c(count, -1.0f);
  for (std::size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i + 1);
  }
  auto a_buffer = make_buffer(s.context, count * 4, CL_MEM_COPY_HOST_PTR, a.data());
  auto b_buffer = make_buffer(s.context, count * 4, CL_MEM_COPY_HOST_PTR, b.data());
  auto c_buffer = make_buffer(s.context, count * 4);
  ASSERT_CL(set_arg(kernel, 0, a_buffer.get()));
  ASSERT_CL(set_arg(kernel, 1, b_buffer.get()));
  ASSERT_CL(set_arg(kernel, 2, c_buffer.get()));
  ASSERT_CL(
      clEnqueueNDRangeKernel(s.queue, kernel, 1, nullptr, &count, nullptr, 0, nullptr, nullptr));
  ASSERT_CL(
      clEnqueueReadBuffer(s.queue, c_buffer, CL_TRUE, 0, count * 4, c.data(), 0, nullptr, nullptr));
  for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "at " << i;
}

TEST_F(remote_program, built_from_source_with_info_like_the_local_one) {
  auto local_program = build_program(local, common_kernels, "-DUNUSED=1");
  auto program = build_program(remote, common_kernels, "-DUNUSED=1");
  ASSERT_NE(program.get(), nullptr);
  EXPECT_EQ(info<cl_uint>(clGetProgramInfo, program.get(), CL_PROGRAM_NUM_DEVICES), 1u);
  EXPECT_EQ(info<cl_device_id>(clGetProgramInfo, program.get(), CL_PROGRAM_DEVICES), remote.device);
  EXPECT_EQ(info<cl_context>(clGetProgramInfo, program.get(), CL_PROGRAM_CONTEXT),
            remote.context.get());
  EXPECT_EQ(info<cl_uint>(clGetProgramInfo, program.get(), CL_PROGRAM_REFERENCE_COUNT), 1u);
  EXPECT_EQ(info_string(clGetProgramInfo, program.get(), CL_PROGRAM_SOURCE), common_kernels);
  EXPECT_EQ(info<std::size_t>(clGetProgramInfo, program.get(), CL_PROGRAM_NUM_KERNELS),
            info<std::size_t>(clGetProgramInfo, local_program.get(), CL_PROGRAM_NUM_KERNELS));
  EXPECT_EQ(info_string(clGetProgramInfo, program.get(), CL_PROGRAM_KERNEL_NAMES),
            info_string(clGetProgramInfo, local_program.get(), CL_PROGRAM_KERNEL_NAMES));
  EXPECT_EQ(
      extra_info<cl_build_status>(build_query(program, remote.device, CL_PROGRAM_BUILD_STATUS)),
      CL_BUILD_SUCCESS);
  auto options = extra_string(build_query(program, remote.device, CL_PROGRAM_BUILD_OPTIONS));
  EXPECT_NE(options.find("-DUNUSED=1"), std::string::npos) << options;
  check_vector_add(remote, program);
}

// The server builds with argument information, which NVIDIA's compiler refuses for a kernel
// without parameters: such a program must still build and run, as it does locally.
TEST_F(remote_program, a_kernel_without_parameters_builds_and_runs) {
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto program = build_program(*s, "__kernel void nothing(void) {}\n");
    ASSERT_NE(program.get(), nullptr);
    auto kernel = make_kernel(program, "nothing");
    const std::size_t global = 64;
    ASSERT_CL(clEnqueueNDRangeKernel(s->queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                     nullptr));
    ASSERT_CL(clFinish(s->queue));
  }
}

TEST_F(remote_program, a_failed_build_reports_its_log) {
  const char* broken = R"(
__kernel void broken(__global int* x) {
  x[0] = undeclared_identifier_xyz;
}
)";
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    cl_int status = CL_SUCCESS;
    program_ref program(clCreateProgramWithSource(s->context, 1, &broken, nullptr, &status));
    ASSERT_CL(status);
    EXPECT_EQ(clBuildProgram(program, 1, &s->device, "", nullptr, nullptr),
              CL_BUILD_PROGRAM_FAILURE);
    auto log = extra_string(build_query(program, s->device, CL_PROGRAM_BUILD_LOG));
    EXPECT_NE(log.find("undeclared_identifier_xyz"), std::string::npos) << log;
    EXPECT_EQ(extra_info<cl_build_status>(build_query(program, s->device, CL_PROGRAM_BUILD_STATUS)),
              CL_BUILD_ERROR);
    kernel_ref kernel(clCreateKernel(program, "broken", &status));
    EXPECT_EQ(status, CL_INVALID_PROGRAM_EXECUTABLE) << cl_error_name(status);
  }
}

TEST_F(remote_program, binaries_round_trip_and_run) {
  auto program = build_program(remote, common_kernels);
  ASSERT_NE(program.get(), nullptr);
  auto size = info<std::size_t>(clGetProgramInfo, program.get(), CL_PROGRAM_BINARY_SIZES);
  ASSERT_GT(size, 0u);
  std::vector<unsigned char> binary(size, 0);
  unsigned char* target = binary.data();
  ASSERT_CL(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof target, &target, nullptr));
  // The remote binary loads on the remote device and, byte for byte, on the local one.
  for (side* s : {&remote, &local}) {
    SCOPED_TRACE(s->name);
    const unsigned char* bytes = binary.data();
    cl_int binary_status = -1, status = CL_SUCCESS;
    program_ref loaded(clCreateProgramWithBinary(s->context, 1, &s->device, &size, &bytes,
                                                 &binary_status, &status));
    ASSERT_CL(status);
    EXPECT_EQ(binary_status, CL_SUCCESS);
    ASSERT_CL(clBuildProgram(loaded, 1, &s->device, "", nullptr, nullptr));
    check_vector_add(*s, loaded);
  }
  // A binary that is not one fails as it does locally: PoCL refuses it at once, NVIDIA at the
  // build.
  std::vector<unsigned char> garbage(64, 0x42);
  cl_int statuses[2][3] = {};
  for (int i = 0; i < 2; ++i) {
    side* s = i == 0 ? &local : &remote;
    SCOPED_TRACE(s->name);
    const unsigned char* bytes = garbage.data();
    const std::size_t length = garbage.size();
    cl_int binary_status = CL_SUCCESS, status = CL_SUCCESS;
    program_ref loaded(clCreateProgramWithBinary(s->context, 1, &s->device, &length, &bytes,
                                                 &binary_status, &status));
    statuses[i][0] = status;
    statuses[i][1] = binary_status;
    statuses[i][2] = loaded.get() != nullptr
                         ? clBuildProgram(loaded, 1, &s->device, "", nullptr, nullptr)
                         : CL_INVALID_PROGRAM;
    EXPECT_TRUE(status != CL_SUCCESS || statuses[i][2] != CL_SUCCESS);
  }
  EXPECT_EQ(statuses[1][0], statuses[0][0]);
  EXPECT_EQ(statuses[1][1], statuses[0][1]);
}

TEST_F(remote_program, compile_with_a_header_then_link) {
  const char* header = "#define SCALE 3\nint scaled(int x);\n";
  const char* library = "#include \"scale.h\"\nint scaled(int x) { return x * SCALE; }\n";
  const char* main_source =
      "#include \"scale.h\"\n"
      "__kernel void apply(__global int* x) { size_t i = get_global_id(0); x[i] = scaled(x[i]); "
      "}\n";
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    cl_int status = CL_SUCCESS;
    auto from_source = [&](const char* text) {
      program_ref program(clCreateProgramWithSource(s->context, 1, &text, nullptr, &status));
      EXPECT_CL(status);
      return program;
    };
    auto header_program = from_source(header);
    auto library_program = from_source(library);
    auto main_program = from_source(main_source);
    cl_program headers[] = {header_program};
    const char* names[] = {"scale.h"};
    ASSERT_CL(
        clCompileProgram(library_program, 1, &s->device, "", 1, headers, names, nullptr, nullptr));
    ASSERT_CL(
        clCompileProgram(main_program, 1, &s->device, "", 1, headers, names, nullptr, nullptr));
    cl_program inputs[] = {main_program, library_program};
    program_ref linked(
        clLinkProgram(s->context, 1, &s->device, "", 2, inputs, nullptr, nullptr, &status));
    ASSERT_CL(status);
    auto kernel = make_kernel(linked, "apply");
    std::vector<cl_int> values(256);
    std::iota(values.begin(), values.end(), -100);
    auto buffer = make_buffer(s->context, values.size() * 4, CL_MEM_COPY_HOST_PTR, values.data());
    ASSERT_CL(set_arg(kernel, 0, buffer.get()));
    const std::size_t count = values.size();
    ASSERT_CL(
        clEnqueueNDRangeKernel(s->queue, kernel, 1, nullptr, &count, nullptr, 0, nullptr, nullptr));
    std::vector<cl_int> back(count);
    ASSERT_CL(clEnqueueReadBuffer(s->queue, buffer, CL_TRUE, 0, count * 4, back.data(), 0, nullptr,
                                  nullptr));
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(back[i], values[i] * 3) << i;
    EXPECT_EQ(extra_info<cl_program_binary_type>(
                  build_query(library_program, s->device, CL_PROGRAM_BINARY_TYPE)),
              static_cast<cl_program_binary_type>(CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT));
    EXPECT_EQ(
        extra_info<cl_program_binary_type>(build_query(linked, s->device, CL_PROGRAM_BINARY_TYPE)),
        static_cast<cl_program_binary_type>(CL_PROGRAM_BINARY_TYPE_EXECUTABLE));
  }
}

TEST_F(remote_program, a_failed_link_fails_as_it_does_locally) {
  // The kernel calls a function no input defines.
  const char* source =
      "int missing(int x);\n"
      "__kernel void apply(__global int* x) { x[0] = missing(x[0]); }\n";
  std::vector<cl_int> statuses;
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    cl_int status = CL_SUCCESS;
    program_ref program(clCreateProgramWithSource(s->context, 1, &source, nullptr, &status));
    ASSERT_CL(status);
    ASSERT_CL(clCompileProgram(program, 1, &s->device, "", 0, nullptr, nullptr, nullptr, nullptr));
    cl_program inputs[] = {program};
    program_ref linked(
        clLinkProgram(s->context, 1, &s->device, "", 1, inputs, nullptr, nullptr, &status));
    statuses.push_back(status);
    if (status == CL_SUCCESS) {
      // Some compilers resolve the symbol only when the kernel is created.
      kernel_ref kernel(clCreateKernel(linked, "apply", &status));
      statuses.back() = status;
    }
  }
  EXPECT_EQ(statuses[1], statuses[0])
      << cl_error_name(statuses[1]) << " remotely, " << cl_error_name(statuses[0]) << " locally";
}

TEST_F(remote_program, kernels_in_program_and_their_info) {
  const char* source = R"(
__kernel void first(__global const float* restrict in, __constant int* table,
                    __local float* scratch, int n) {
  scratch[get_local_id(0)] = in[0] + (float)table[0] + (float)n;
}
__kernel __attribute__((reqd_work_group_size(8, 4, 1))) void second(__global volatile uint* out) {
  out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = 1;
}
)";
  auto local_program = build_program(local, source, "-cl-kernel-arg-info");
  auto program = build_program(remote, source, "-cl-kernel-arg-info");
  ASSERT_NE(program.get(), nullptr);
  cl_uint count = 0;
  ASSERT_CL(clCreateKernelsInProgram(program, 0, nullptr, &count));
  ASSERT_EQ(count, 2u);
  cl_kernel made[2] = {};
  ASSERT_CL(clCreateKernelsInProgram(program, 2, made, nullptr));
  kernel_ref kernels[2] = {kernel_ref(made[0]), kernel_ref(made[1])};
  std::set<std::string> names;
  for (auto& kernel : kernels) {
    auto name = info_string(clGetKernelInfo, kernel.get(), CL_KERNEL_FUNCTION_NAME);
    names.insert(name);
    SCOPED_TRACE(name);
    auto local_kernel = make_kernel(local_program, name.c_str());
    EXPECT_EQ(info<cl_uint>(clGetKernelInfo, kernel.get(), CL_KERNEL_NUM_ARGS),
              info<cl_uint>(clGetKernelInfo, local_kernel.get(), CL_KERNEL_NUM_ARGS));
    EXPECT_EQ(info<cl_program>(clGetKernelInfo, kernel.get(), CL_KERNEL_PROGRAM), program.get());
    EXPECT_EQ(info<cl_context>(clGetKernelInfo, kernel.get(), CL_KERNEL_CONTEXT),
              remote.context.get());
    EXPECT_EQ(info<cl_uint>(clGetKernelInfo, kernel.get(), CL_KERNEL_REFERENCE_COUNT), 1u);
    EXPECT_EQ(info_string(clGetKernelInfo, kernel.get(), CL_KERNEL_ATTRIBUTES),
              info_string(clGetKernelInfo, local_kernel.get(), CL_KERNEL_ATTRIBUTES));
    const auto args = info<cl_uint>(clGetKernelInfo, kernel.get(), CL_KERNEL_NUM_ARGS);
    for (cl_uint arg = 0; arg < args; ++arg) {
      SCOPED_TRACE(arg);
      for (auto param : {CL_KERNEL_ARG_ADDRESS_QUALIFIER, CL_KERNEL_ARG_ACCESS_QUALIFIER,
                         CL_KERNEL_ARG_TYPE_QUALIFIER}) {
        EXPECT_EQ(extra_info<cl_ulong>(arg_query(kernel, arg, static_cast<cl_uint>(param))),
                  extra_info<cl_ulong>(arg_query(local_kernel, arg, static_cast<cl_uint>(param))));
      }
      EXPECT_EQ(extra_string(arg_query(kernel, arg, CL_KERNEL_ARG_TYPE_NAME)),
                extra_string(arg_query(local_kernel, arg, CL_KERNEL_ARG_TYPE_NAME)));
      EXPECT_EQ(extra_string(arg_query(kernel, arg, CL_KERNEL_ARG_NAME)),
                extra_string(arg_query(local_kernel, arg, CL_KERNEL_ARG_NAME)));
    }
    for (auto param : {CL_KERNEL_WORK_GROUP_SIZE, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE}) {
      EXPECT_EQ(extra_info<std::size_t>(
                    work_group_query(kernel, remote.device, static_cast<cl_uint>(param))),
                extra_info<std::size_t>(
                    work_group_query(local_kernel, local.device, static_cast<cl_uint>(param))));
    }
    for (auto param : {CL_KERNEL_LOCAL_MEM_SIZE, CL_KERNEL_PRIVATE_MEM_SIZE}) {
      EXPECT_EQ(extra_info<cl_ulong>(
                    work_group_query(kernel, remote.device, static_cast<cl_uint>(param))),
                extra_info<cl_ulong>(
                    work_group_query(local_kernel, local.device, static_cast<cl_uint>(param))));
    }
    using sizes = std::array<std::size_t, 3>;
    const auto compiled = extra_info<sizes>(
        work_group_query(kernel, remote.device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE));
    EXPECT_EQ(compiled, name == "second" ? (sizes{8, 4, 1}) : (sizes{0, 0, 0}));
    // The device may be left out when the kernel's program has one.
    EXPECT_EQ(
        extra_info<sizes>(work_group_query(kernel, nullptr, CL_KERNEL_COMPILE_WORK_GROUP_SIZE)),
        compiled);
  }
  EXPECT_EQ(names, (std::set<std::string>{"first", "second"}));
  // Too small an array fails.
  cl_kernel one = nullptr;
  EXPECT_EQ(clCreateKernelsInProgram(program, 1, &one, nullptr), CL_INVALID_VALUE);
}

class remote_kernel : public remote_test {};

TEST_F(remote_kernel, vector_add_and_a_task) {
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto program = build_program(*s, common_kernels);
    ASSERT_NE(program.get(), nullptr);
    check_vector_add(*s, program, 100'000);
    // clEnqueueTask: one work item.
    auto increment = make_kernel(program, "increment");
    cl_int value = 41;
    auto buffer = make_buffer(s->context, 4, CL_MEM_COPY_HOST_PTR, &value);
    ASSERT_CL(set_arg(increment, 0, buffer.get()));
    ASSERT_CL(set_arg(increment, 1, cl_int{1}));
    ASSERT_CL(clEnqueueTask(s->queue, increment, 0, nullptr, nullptr));
    ASSERT_CL(clEnqueueReadBuffer(s->queue, buffer, CL_TRUE, 0, 4, &value, 0, nullptr, nullptr));
    EXPECT_EQ(value, 42);
  }
}

TEST_F(remote_kernel, local_memory_argument_given_by_size_only) {
  const std::size_t groups = 37, group = 64, count = groups * group;
  std::vector<float> in(count);
  for (std::size_t i = 0; i < count; ++i) in[i] = static_cast<float>(i % 101);
  std::vector<float> expected(groups, 0.0f);
  for (std::size_t i = 0; i < count; ++i) expected[i / group] += in[i];
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto program = build_program(*s, common_kernels);
    auto kernel = make_kernel(program, "group_sum");
    auto in_buffer = make_buffer(s->context, count * 4, CL_MEM_COPY_HOST_PTR, in.data());
    auto out_buffer = make_buffer(s->context, groups * 4);
    ASSERT_CL(set_arg(kernel, 0, in_buffer.get()));
    ASSERT_CL(set_arg(kernel, 1, out_buffer.get()));
    ASSERT_CL(clSetKernelArg(kernel, 2, group * sizeof(float), nullptr));
    ASSERT_CL(
        clEnqueueNDRangeKernel(s->queue, kernel, 1, nullptr, &count, &group, 0, nullptr, nullptr));
    std::vector<float> sums(groups);
    ASSERT_CL(clEnqueueReadBuffer(s->queue, out_buffer, CL_TRUE, 0, groups * 4, sums.data(), 0,
                                  nullptr, nullptr));
    EXPECT_EQ(sums, expected);
  }
}

TEST_F(remote_kernel, scalar_vector_and_struct_arguments_of_every_size) {
  const char* source = R"(
typedef struct { int a; float b; long c; } pod;
__kernel void scalars(__global long* out, char c, uchar uc, short s, ushort us, int i, uint ui,
                      long l, ulong ul, float f, int4 v, pod p) {
  out[0] = c; out[1] = uc; out[2] = s; out[3] = us; out[4] = i; out[5] = ui; out[6] = l;
  out[7] = as_long(ul); out[8] = as_int(f); out[9] = v.x; out[10] = v.y; out[11] = v.z;
  out[12] = v.w; out[13] = p.a; out[14] = as_int(p.b); out[15] = p.c;
}
)";
  struct pod {
    cl_int a;
    cl_float b;
    cl_long c;
  };
  static_assert(sizeof(pod) == 16);
  // An 8-byte value that looks like a pointer (it is one, to this host's stack) and one with
  // the high bit set: neither is an OpenCL object, so both must arrive as bytes.
  int on_stack = 0;
  const cl_long pointer_like = static_cast<cl_long>(reinterpret_cast<std::intptr_t>(&on_stack));
  const cl_ulong high = 0xfedcba9876543210ull;
  const cl_float f = -1.5f;
  const cl_int4 v{{1, -2, 3, -4}};
  const pod p{-7, 0.25f, -1234567890123ll};
  std::vector<cl_long> expected{-5,     250,          -300,         60000,
                                -70000, 4000000000ll, pointer_like, static_cast<cl_long>(high)};
  cl_int f_bits = 0, b_bits = 0;
  std::memcpy(&f_bits, &f, 4);
  std::memcpy(&b_bits, &p.b, 4);
  expected.insert(expected.end(), {f_bits, 1, -2, 3, -4, -7, b_bits, p.c});
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto program = build_program(*s, source);
    auto kernel = make_kernel(program, "scalars");
    auto out = make_buffer(s->context, 16 * sizeof(cl_long));
    ASSERT_CL(set_arg(kernel, 0, out.get()));
    ASSERT_CL(set_arg(kernel, 1, cl_char{-5}));
    ASSERT_CL(set_arg(kernel, 2, cl_uchar{250}));
    ASSERT_CL(set_arg(kernel, 3, cl_short{-300}));
    ASSERT_CL(set_arg(kernel, 4, cl_ushort{60000}));
    ASSERT_CL(set_arg(kernel, 5, cl_int{-70000}));
    ASSERT_CL(set_arg(kernel, 6, cl_uint{4000000000u}));
    ASSERT_CL(set_arg(kernel, 7, pointer_like));
    ASSERT_CL(set_arg(kernel, 8, high));
    ASSERT_CL(set_arg(kernel, 9, f));
    ASSERT_CL(set_arg(kernel, 10, v));
    ASSERT_CL(set_arg(kernel, 11, p));
    ASSERT_CL(clEnqueueTask(s->queue, kernel, 0, nullptr, nullptr));
    std::vector<cl_long> back(16);
    ASSERT_CL(clEnqueueReadBuffer(s->queue, out, CL_TRUE, 0, 16 * sizeof(cl_long), back.data(), 0,
                                  nullptr, nullptr));
    EXPECT_EQ(back, expected);
  }
}

TEST_F(remote_kernel, double_arguments_are_bytes_not_handles) {
  if (info<cl_device_fp_config>(clGetDeviceInfo, remote.device, CL_DEVICE_DOUBLE_FP_CONFIG) == 0) {
    GTEST_SKIP() << "the device has no double precision";
  }
  const char* source = R"(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void doubles(__global double* out, double d, double e) {
  out[0] = d; out[1] = d * e; out[2] = e;
}
)";
  const cl_double d = 3.141592653589793, e = -2.5e-300;
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto program = build_program(*s, source);
    auto kernel = make_kernel(program, "doubles");
    auto out = make_buffer(s->context, 3 * sizeof(cl_double));
    ASSERT_CL(set_arg(kernel, 0, out.get()));
    ASSERT_CL(set_arg(kernel, 1, d));
    ASSERT_CL(set_arg(kernel, 2, e));
    ASSERT_CL(clEnqueueTask(s->queue, kernel, 0, nullptr, nullptr));
    std::vector<cl_double> back(3);
    ASSERT_CL(clEnqueueReadBuffer(s->queue, out, CL_TRUE, 0, 3 * sizeof(cl_double), back.data(), 0,
                                  nullptr, nullptr));
    EXPECT_EQ(back, (std::vector<cl_double>{d, d * e, e}));
  }
}

TEST_F(remote_kernel, two_dimensions_with_an_offset_and_a_local_size) {
  const char* source = R"(
__kernel void coordinates(__global int* out, int row) {
  int x = get_global_id(0), y = get_global_id(1);
  out[y * row + x] = x * 1000 + y + (int)get_local_id(0) * 1000000;
}
)";
  const std::size_t row = 40, rows = 30;
  const std::size_t offset[2] = {4, 6}, global[2] = {32, 16}, group[2] = {8, 4};
  std::vector<cl_int> expected(row * rows, -1);
  for (std::size_t y = offset[1]; y < offset[1] + global[1]; ++y) {
    for (std::size_t x = offset[0]; x < offset[0] + global[0]; ++x) {
      expected[y * row + x] = static_cast<cl_int>(x * 1000 + y + ((x - offset[0]) % 8) * 1000000);
    }
  }
  for (side* s : {&local, &remote}) {
    SCOPED_TRACE(s->name);
    auto program = build_program(*s, source);
    auto kernel = make_kernel(program, "coordinates");
    std::vector<cl_int> initial(row * rows, -1);
    auto out = make_buffer(s->context, initial.size() * 4, CL_MEM_COPY_HOST_PTR, initial.data());
    ASSERT_CL(set_arg(kernel, 0, out.get()));
    ASSERT_CL(set_arg(kernel, 1, static_cast<cl_int>(row)));
    ASSERT_CL(
        clEnqueueNDRangeKernel(s->queue, kernel, 2, offset, global, group, 0, nullptr, nullptr));
    std::vector<cl_int> back(initial.size());
    ASSERT_CL(clEnqueueReadBuffer(s->queue, out, CL_TRUE, 0, back.size() * 4, back.data(), 0,
                                  nullptr, nullptr));
    EXPECT_EQ(back, expected);
  }
}

}  // namespace
}  // namespace troupe::remote_test
