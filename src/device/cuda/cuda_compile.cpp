#include "device/cuda/cuda_compile.hpp"

#include <algorithm>
#include <cctype>

#include "troupe/async/error.hpp"

namespace troupe::detail {
namespace {

/// Destroys the NVRTC program on every way out of compile_cuda.
class program_guard {
 public:
  explicit program_guard(const nvrtc_library& nvrtc) : nvrtc_(nvrtc) {}
  ~program_guard() {
    if (program) nvrtc_.nvrtcDestroyProgram(&program);
  }
  program_guard(const program_guard&) = delete;
  program_guard& operator=(const program_guard&) = delete;

  nvrtcProgram program = nullptr;

 private:
  const nvrtc_library& nvrtc_;
};

[[noreturn]] void nvrtc_failed(const nvrtc_library& nvrtc, nvrtcResult result,
                               std::string_view call, std::string_view device_name,
                               std::string_view log = {}) {
  std::string message = "NVRTC ";
  message += call;
  message += " for device '";
  message += device_name;
  message += "': ";
  message += nvrtc.nvrtcGetErrorString(result);
  if (!log.empty()) {
    message += '\n';
    message += log;
  }
  throw error(errc::device_error, message);
}

bool names_architecture(const std::vector<std::string>& options) {
  return std::any_of(options.begin(), options.end(), [](const std::string& option) {
    return option.starts_with("-arch") || option.starts_with("--gpu-architecture");
  });
}

/// The architectures NVRTC can compile for (75, 80, ... 120); empty when it cannot say.
std::vector<int> supported_architectures(const nvrtc_library& nvrtc) {
  std::vector<int> architectures;
  int count = 0;
  if (!nvrtc.nvrtcGetNumSupportedArchs || !nvrtc.nvrtcGetSupportedArchs ||
      nvrtc.nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) {
    return architectures;
  }
  architectures.resize(static_cast<std::size_t>(count));
  if (nvrtc.nvrtcGetSupportedArchs(architectures.data()) != NVRTC_SUCCESS) architectures.clear();
  return architectures;
}

std::string architecture_option(const nvrtc_library& nvrtc, version compute_capability,
                                std::string_view device_name) {
  const int target = compute_capability.major * 10 + compute_capability.minor;
  const std::vector<int> supported = supported_architectures(nvrtc);
  if (supported.empty() || std::ranges::find(supported, target) != supported.end()) {
    return "--gpu-architecture=sm_" + std::to_string(target);
  }
  // A device newer than NVRTC: PTX for the newest architecture below it runs there, since the
  // driver compiles PTX for its own devices.
  int best = 0;
  for (int architecture : supported) {
    if (architecture < target) best = std::max(best, architecture);
  }
  if (best == 0) {
    throw error(errc::device_error, "NVRTC " + nvrtc_version(nvrtc) +
                                        " cannot compile for device '" + std::string(device_name) +
                                        "' (sm_" + std::to_string(target) +
                                        "): the oldest architecture it supports is sm_" +
                                        std::to_string(*std::ranges::min_element(supported)));
  }
  return "--gpu-architecture=compute_" + std::to_string(best);
}

std::string program_log(const nvrtc_library& nvrtc, nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtc.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtc.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

std::vector<std::string> split_options(std::string_view options) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  bool quoted = false;
  for (char letter : options) {
    if (letter == '"') {
      quoted = !quoted;
      in_word = true;
    } else if (!quoted && std::isspace(static_cast<unsigned char>(letter))) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += letter;
      in_word = true;
    }
  }
  if (quoted) {
    throw error(errc::invalid_argument,
                "CUDA build options have an unmatched double quote: " + std::string(options));
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string nvrtc_version(const nvrtc_library& nvrtc) {
  int major = 0;
  int minor = 0;
  if (nvrtc.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

cuda_compilation compile_cuda(const nvrtc_library& nvrtc, const std::string& source,
                              std::string_view options, version compute_capability,
                              std::string_view device_name) {
  std::vector<std::string> arguments = split_options(options);
  if (!names_architecture(arguments)) {
    arguments.push_back(architecture_option(nvrtc, compute_capability, device_name));
  }
  std::vector<const char*> argument_pointers;
  for (const std::string& argument : arguments) argument_pointers.push_back(argument.c_str());

  program_guard guard(nvrtc);
  nvrtcResult result =
      nvrtc.nvrtcCreateProgram(&guard.program, source.c_str(), "troupe.cu", 0, nullptr, nullptr);
  if (result != NVRTC_SUCCESS) nvrtc_failed(nvrtc, result, "nvrtcCreateProgram", device_name);

  result = nvrtc.nvrtcCompileProgram(guard.program, static_cast<int>(argument_pointers.size()),
                                     argument_pointers.data());
  cuda_compilation compiled;
  compiled.log = program_log(nvrtc, guard.program);
  if (result == NVRTC_ERROR_COMPILATION || result == NVRTC_ERROR_INVALID_OPTION) {
    throw error(errc::compile_error,
                "CUDA program for device '" + std::string(device_name) + "' did not compile:\n" +
                    (compiled.log.empty() ? nvrtc.nvrtcGetErrorString(result) : compiled.log));
  }
  if (result != NVRTC_SUCCESS) {
    nvrtc_failed(nvrtc, result, "nvrtcCompileProgram", device_name, compiled.log);
  }

  // CUBIN when compiled for a real architecture (sm_XY); PTX for a virtual one (compute_XY).
  std::size_t size = 0;
  if (nvrtc.nvrtcGetCUBINSize(guard.program, &size) == NVRTC_SUCCESS && size > 0) {
    compiled.image.kind = cuda_image_kind::cubin;
    compiled.image.bytes.resize(size);
    result =
        nvrtc.nvrtcGetCUBIN(guard.program, reinterpret_cast<char*>(compiled.image.bytes.data()));
    if (result != NVRTC_SUCCESS) nvrtc_failed(nvrtc, result, "nvrtcGetCUBIN", device_name);
    return compiled;
  }
  result = nvrtc.nvrtcGetPTXSize(guard.program, &size);
  if (result != NVRTC_SUCCESS) nvrtc_failed(nvrtc, result, "nvrtcGetPTXSize", device_name);
  compiled.image.kind = cuda_image_kind::ptx;
  compiled.image.bytes.resize(size);  // with the terminating NUL
  result = nvrtc.nvrtcGetPTX(guard.program, reinterpret_cast<char*>(compiled.image.bytes.data()));
  if (result != NVRTC_SUCCESS) nvrtc_failed(nvrtc, result, "nvrtcGetPTX", device_name);
  return compiled;
}

}  // namespace troupe::detail
