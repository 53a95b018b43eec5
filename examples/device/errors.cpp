// errors: what goes wrong on a device arrives as a failed future (allocate, which returns no
// future, throws instead): a troupe::error with a code, and a message that says what was
// expected, what was found, and on which device.
#include <cstddef>
#include <iostream>
#include <vector>

#include "pick_device.hpp"
#include "troupe/troupe.hpp"

const char* const opencl_source = R"(
__kernel void add(__global const int* a, __global const int* b, __global int* c, uint n) {
  size_t i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
})";
const char* const cuda_source = R"(
extern "C" __global__ void add(const int* a, const int* b, int* c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
})";

// Runs `attempt`, prints the error it ends with, and says whether that error has code `want`.
template <class Attempt>
bool expect(const char* what, troupe::errc want, Attempt attempt) {
  try {
    attempt();
    std::cout << what << ": no error (UNEXPECTED)\n";
    return false;
  } catch (const troupe::error& e) {
    std::cout << what << ":\n  " << troupe::to_string(e.code()) << ": " << e.what() << "\n";
    return e.code() == want;
  }
}

int main(int argc, char** argv) {
  troupe::config cfg{argc, argv};
  troupe::actor_system sys{cfg};
  auto picked = pick_device(sys);
  if (!picked) return 0;
  auto dev = *picked;
  auto prog =
      dev.compile(dev.backend() == troupe::backend::cuda ? cuda_source : opencl_source).get();
  auto a = dev.allocate<int>(16), b = dev.allocate<int>(16), c = dev.allocate<int>(16);
  auto small = dev.allocate<int>(8);
  using troupe::errc;
  troupe::nd_range range{{16}};

  bool ok = expect("add(a, b, c, n) launched without n", errc::invalid_argument,
                   [&] { dev.launch(prog, "add", range, a, b, c).get(); });
  ok &= expect("n passed as a double instead of a uint", errc::invalid_argument,
               [&] { dev.launch(prog, "add", range, a, b, c, 16.0).get(); });
  ok &= expect("copying 16 elements into a buffer of 8", errc::out_of_range,
               [&] { a.copy_to(small).get(); });
  ok &= expect("reading 4 elements from element 6 of 8", errc::out_of_range,
               [&] { small.read(6, 4).get(); });
  ok &= expect("allocating 4 times the device's memory", errc::out_of_device_memory, [&] {
    auto huge = dev.allocate<std::byte>(dev.info().global_memory * 4);
    huge.fill(std::byte{0}).get();  // some drivers allocate lazily: then the first use fails
  });

  // Handles may outlive their actor system; using them then fails instead of crashing.
  troupe::device kept;
  troupe::buffer<int> orphan;
  {
    troupe::actor_system short_lived{cfg};
    kept = *pick_device(short_lived, true);
    orphan = kept.allocate<int>(4);
  }
  ok &= expect("reading a buffer after its system is gone", errc::system_gone,
               [&] { orphan.read().get(); });
  ok &= expect("allocating on a device after its system is gone", errc::system_gone,
               [&] { kept.allocate<int>(4); });

  std::cout << "every mistake gave the expected error: " << (ok ? "yes" : "no") << "\n";
  return ok ? 0 : 1;
}
