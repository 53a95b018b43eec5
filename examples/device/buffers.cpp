// buffers: moving data between host and device memory. A buffer<T> holds size() elements on one
// device; write, read, read_into, fill and copy_to each return a future, on the whole buffer or
// on a range (offsets and counts are in elements, not bytes). A host_buffer<T> is pinned host
// memory: the device copies to and from it directly, without a staging copy.
#include <array>
#include <iostream>
#include <numeric>
#include <span>
#include <vector>

#include "pick_device.hpp"
#include "troupe/troupe.hpp"

template <class Container>
void print(const char* what, const Container& values) {
  std::cout << what << ":";
  for (auto v : values) std::cout << " " << v;
  std::cout << "\n";
}

int main(int argc, char** argv) {
  troupe::actor_system sys{troupe::config{argc, argv}};
  auto picked = pick_device(sys);
  if (!picked) return 0;
  auto dev = *picked;

  // Whole buffer, then ranges. Host memory must stay valid until the future is ready.
  std::vector<int> numbers(16);
  std::iota(numbers.begin(), numbers.end(), 0);
  auto a = dev.allocate<int>(16);
  a.write(numbers).get();
  auto whole = a.read().get();
  print("write 0..15, read all", whole);
  const std::array<int, 3> negatives{-1, -2, -3};
  a.write(4, std::span<const int>{negatives}).get();
  auto middle = a.read(2, 6).get();
  print("write -1 -2 -3 at 4, read 6 from 2", middle);
  std::array<int, 4> tail{};
  a.read_into(12, std::span<int>{tail}).get();  // into memory you already have
  print("read_into the last 4", tail);

  // fill and copy_to, between two buffers of one device (or of two devices: the same call).
  auto b = dev.allocate<int>(16);
  b.fill(7).get();
  b.fill(0, 8, 8).get();         // value 0, from element 8, 8 elements
  a.copy_to(0, b, 10, 4).get();  // a's first 4 to b from element 10
  auto copied = b.read().get();
  print("fill 7, fill 0 from 8, copy a[0..3] to 10", copied);

  // Pinned host memory: the device reads and writes it directly.
  auto pinned = dev.allocate_host<float>(1024);
  for (std::size_t i = 0; i < pinned.size(); ++i) pinned[i] = static_cast<float>(i) * 0.5f;
  auto device_copy = dev.allocate<float>(pinned.size());
  auto back = dev.allocate_host<float>(pinned.size());
  auto up = device_copy.write(pinned);
  device_copy.read_into(back, troupe::after(up)).get();
  bool pinned_ok = std::equal(pinned.begin(), pinned.end(), back.begin());
  std::cout << "1024 floats through pinned memory and back: " << (pinned_ok ? "equal" : "DIFFERENT")
            << "\n";

  bool ok = whole == numbers && middle == std::vector<int>{2, 3, -1, -2, -3, 7} &&
            tail == std::array<int, 4>{12, 13, 14, 15} &&
            copied == std::vector<int>{7, 7, 7, 7, 7, 7, 7, 7, 0, 0, 0, 1, 2, 3, 0, 0} && pinned_ok;
  std::cout << "every transfer moved what it should: " << (ok ? "yes" : "no") << "\n";
  return ok ? 0 : 1;
}
