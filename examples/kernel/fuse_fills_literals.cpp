// The third listing of the paper: fuseFillsLiterals, the seventh stage of the WAH index build
// (apps/wah), composed with a stream compaction. The fuse kernel interleaves each literal with
// the fill word before it (0 where there is none); the compaction keeps the words that are not 0.
// Both stay on the device: only the finished words are read back.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <span>
#include <vector>

#include "../device/pick_device.hpp"

using namespace troupe::kernel;
using u32 = std::uint32_t;

// Written once for OpenCL and CUDA (portable_source).
constexpr const char* fuse_body = R"(
KERNEL void fuse_fills_literals(GLOBAL const u32* fills, GLOBAL const u32* literals,
                                GLOBAL u32* fused, u32 m) {
  u32 j = GLOBAL_ID;
  if (j >= m) return;
  fused[2 * j] = fills[j];
  fused[2 * j + 1] = literals[j];
})";

int main() {
  troupe::actor_system sys;
  auto dev = pick_device(sys);
  if (!dev) return 0;

  // One bitmap: literals (bit 31 clear) and, before some, a fill word (bit 31 set) counting the
  // empty 31-row chunks in between.
  const std::vector<u32> literals{0x1u, 0x200u, 0x80u, 0x7fffffffu, 0x4u};
  const std::vector<u32> fills{0u, 0u, 0x80000001u, 0x80000005u, 0u};
  const auto m = static_cast<u32>(literals.size());
  auto upload = [&](const std::vector<u32>& host) {
    auto memory = dev->allocate<u32>(host.size());
    auto written = memory.write(std::span<const u32>{host}).share();
    return mem_ref<u32>{memory, host.size(), written};
  };

  // The fuse kernel answers with what the compaction takes: the columns and the keep flags.
  auto fuse = sys.spawn_kernel(
      portable_source(fuse_body), "fuse_fills_literals", troupe::nd_range{{m}}, on(*dev),
      map_output([](mem_ref<u32> fused) {
        return troupe::make_message(std::vector<mem_ref<u32>>{fused}, fused);
      }),
      in<u32, ref>{}, in<u32, ref>{}, out<u32, ref>{2 * std::size_t{m}}, priv<u32>{m});
  auto fuse_and_compact = spawn_compaction(sys, on(*dev)) * fuse;

  auto words =
      troupe::request<std::vector<mem_ref<u32>>>(fuse_and_compact, upload(fills), upload(literals))
          .get()
          .at(0)
          .read()
          .get();

  std::vector<u32> expected;
  for (u32 j = 0; j < m; ++j) {
    if (fills[j] != 0) expected.push_back(fills[j]);
    expected.push_back(literals[j]);
  }
  std::cout << "fused and compacted: " << words.size() << " words:";
  for (u32 w : words) std::cout << " 0x" << std::hex << w << std::dec;
  const bool right = words == expected;
  std::cout << (right ? "  (ok)" : "  WRONG") << "\n";
  return right ? EXIT_SUCCESS : EXIT_FAILURE;
}
