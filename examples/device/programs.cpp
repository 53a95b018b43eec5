// programs: compiling kernels. device::compile(source, options) returns a future<program>; the
// options go to the compiler (here -DFACTOR=3 defines a macro). A compile error fails that
// future with a troupe::error whose message holds the compiler's build log. Compiled programs
// are also kept on disk (config::kernel_cache, TROUPE_KERNEL_CACHE, --troupe.kernel-cache), so
// a later actor system, or a later run, loads them instead of compiling: see from_cache().
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "pick_device.hpp"
#include "troupe/troupe.hpp"

const char* const opencl_source = R"(
__kernel void scale(__global int* x, uint n) {
  size_t i = get_global_id(0);
  if (i < n) x[i] *= FACTOR;
})";
const char* const cuda_source = R"(
extern "C" __global__ void scale(int* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= FACTOR;
})";

const char* source_for(const troupe::device& dev) {
  return dev.backend() == troupe::backend::cuda ? cuda_source : opencl_source;
}

int main(int argc, char** argv) {
  troupe::config cfg{argc, argv};
  troupe::actor_system sys{cfg};
  auto picked = pick_device(sys);
  if (!picked) return 0;
  auto dev = *picked;

  // Options: FACTOR is defined on the compiler's command line.
  auto prog = dev.compile(source_for(dev), "-DFACTOR=3").get();
  std::vector<int> values{1, 2, 3, 4};
  auto x = dev.allocate<int>(values.size());
  auto written = x.write(values);
  auto scaled = dev.launch(prog, "scale", troupe::nd_range{{4}}, troupe::after(written), x, 4u);
  auto result = x.read(troupe::after(scaled)).get();
  std::cout << "with -DFACTOR=3, 1 2 3 4 became";
  for (int v : result) std::cout << " " << v;
  std::cout << "\n";

  // A compile error: the future fails; the message names the device and has the build log.
  auto broken = dev.backend() == troupe::backend::cuda
                    ? "extern \"C\" __global__ void k(int* x) { x[0] = undeclared_name; }"
                    : "__kernel void k(__global int* x) { x[0] = undeclared_name; }";
  bool failed = false;
  try {
    dev.compile(broken).get();
  } catch (const troupe::error& e) {
    failed = e.code() == troupe::errc::compile_error;
    std::cout << "compiling a kernel with a mistake fails:\n" << e.what() << "\n";
  }

  // The disk cache: the first system compiles and stores the program, the second loads it.
  auto cache_dir = std::filesystem::temp_directory_path() /
                   ("troupe-programs-example-" + std::to_string(std::random_device{}()));
  bool computed = true;
  auto compile_in_a_new_system = [&] {
    troupe::config with_cache = cfg;
    with_cache.kernel_cache = cache_dir.string();
    troupe::actor_system other{with_cache};
    auto d = *pick_device(other, true);
    auto p = d.compile(source_for(d), "-DFACTOR=3").get();
    auto y = d.allocate<int>(4);
    y.fill(5).get();
    d.launch(p, "scale", troupe::nd_range{{4}}, y, 4u).get();
    computed = computed && y.read().get() == std::vector<int>(4, 15);
    return p.from_cache();
  };
  bool first = compile_in_a_new_system();
  bool second = compile_in_a_new_system();
  std::filesystem::remove_all(cache_dir);
  std::cout << "kernel cache " << cache_dir.string() << ": from_cache() " << std::boolalpha << first
            << " in the first system, " << second << " in the second\n";

  bool ok = result == std::vector<int>{3, 6, 9, 12} && failed && computed && !first && second;
  std::cout << "programs behaved as expected: " << (ok ? "yes" : "no") << "\n";
  return ok ? 0 : 1;
}
