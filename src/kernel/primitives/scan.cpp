#include "troupe/kernel/scan.hpp"

#include <limits>
#include <optional>
#include <string>
#include <tuple>

#include "kernel/primitives/scan_kernels.hpp"
#include "troupe/core/compose.hpp"
#include "troupe/kernel/portable_source.hpp"
#include "troupe/kernel/spawn_kernel.hpp"

namespace troupe::kernel {

namespace {

using u32 = std::uint32_t;
using detail::blocks_for;
using detail::scan_block;
using detail::scan_tile;
using detail::tiles_range;

// Reduce-then-scan in three launches whatever the size: each block reduces its tile, one block
// scans the tile totals (looping over them), each block scans its tile from its total's prefix.
// A segmented scan is a plain scan over (head, value) pairs, whose operator keeps the right
// value when the right side has a head; plain scans carry head = 0.
constexpr const char* scan_body = R"(
#define TILE (BLOCK * ITEMS)
#define PAD(k) ((k) + ((k) >> 5)) /* no bank conflicts when a thread walks its own items */
#define PADDED_TILE PAD(TILE)
#if SEGMENTED
#define HEADS_PARAMETER , GLOBAL const u32* heads
#else
#define HEADS_PARAMETER
#endif

typedef struct { u32 head; u32 value; } scan_state;

FN scan_state make_state(u32 head, u32 value) {
  scan_state s;
  s.head = head;
  s.value = value;
  return s;
}

FN scan_state combine(scan_state a, scan_state b) {
  return make_state(a.head | b.head, b.head ? b.value : OP(a.value, b.value));
}

/* Inclusive scan of one state per thread over the block. */
FN scan_state block_scan(scan_state x, SHARED_PTR scan_state* buffer) {
  buffer[THREAD_ID] = x;
  SYNC_THREADS();
  for (u32 offset = 1; offset < BLOCK; offset <<= 1) {
    scan_state y = buffer[THREAD_ID];
    if (THREAD_ID >= offset) y = combine(buffer[THREAD_ID - offset], y);
    SYNC_THREADS();
    buffer[THREAD_ID] = y;
    SYNC_THREADS();
  }
  return buffer[THREAD_ID];
}

/* The block's tile, read coalesced into shared memory. */
FN void load_tile(GLOBAL const u32* data HEADS_PARAMETER, u32 n, SHARED_PTR u32* values,
                  SHARED_PTR u32* head_flags) {
  u32 first = BLOCK_ID * TILE;
  for (u32 k = THREAD_ID; k < TILE; k += BLOCK) {
    u32 i = first + k;
    u32 x = i < n ? data[i] : IDENTITY;
    values[PAD(k)] = NONZERO ? (x != 0) : x;
#if SEGMENTED
    head_flags[PAD(k)] = i < n && heads[i] != 0;
#endif
  }
  SYNC_THREADS();
}

FN scan_state item(SHARED_PTR const u32* values, SHARED_PTR const u32* head_flags, u32 k) {
  return make_state(SEGMENTED ? head_flags[PAD(k)] : 0, values[PAD(k)]);
}

/* The reduction of this thread's ITEMS consecutive elements. */
FN scan_state thread_total(SHARED_PTR const u32* values, SHARED_PTR const u32* head_flags) {
  scan_state total = make_state(0, IDENTITY);
  for (u32 j = 0; j < ITEMS; ++j) total = combine(total, item(values, head_flags, THREAD_ID * ITEMS + j));
  return total;
}

KERNEL void scan_reduce(GLOBAL const u32* data HEADS_PARAMETER, GLOBAL u32* totals, u32 n) {
  SHARED u32 values[PADDED_TILE];
  SHARED u32 head_flags[SEGMENTED ? PADDED_TILE : 1];
  SHARED scan_state buffer[BLOCK];
  load_tile(data EXTRA_HEADS, n, values, head_flags);
  scan_state total = block_scan(thread_total(values, head_flags), buffer);
  if (THREAD_ID == BLOCK - 1) {
    totals[2 * BLOCK_ID] = total.head;
    totals[2 * BLOCK_ID + 1] = total.value;
  }
}

/* One block: the tile totals become their exclusive prefixes, in place. */
KERNEL void scan_totals(GLOBAL const u32* data HEADS_PARAMETER, GLOBAL u32* totals, u32 tiles) {
  SHARED scan_state buffer[BLOCK];
  scan_state carry = make_state(0, IDENTITY);
  for (u32 first = 0; first < tiles; first += BLOCK) {
    u32 tile = first + THREAD_ID;
    scan_state own = make_state(0, IDENTITY);
    if (tile < tiles) own = make_state(totals[2 * tile], totals[2 * tile + 1]);
    block_scan(own, buffer);
    scan_state before = THREAD_ID == 0 ? carry : combine(carry, buffer[THREAD_ID - 1]);
    if (tile < tiles) {
      totals[2 * tile] = before.head;
      totals[2 * tile + 1] = before.value;
    }
    carry = combine(carry, buffer[BLOCK - 1]);
    SYNC_THREADS();
  }
}

KERNEL void scan_tiles(GLOBAL const u32* data HEADS_PARAMETER, GLOBAL const u32* prefixes,
                       GLOBAL u32* result, u32 n) {
  SHARED u32 values[PADDED_TILE];
  SHARED u32 head_flags[SEGMENTED ? PADDED_TILE : 1];
  SHARED scan_state buffer[BLOCK];
  load_tile(data EXTRA_HEADS, n, values, head_flags);
  block_scan(thread_total(values, head_flags), buffer);
  scan_state running = make_state(prefixes[2 * BLOCK_ID], prefixes[2 * BLOCK_ID + 1]);
  if (THREAD_ID > 0) running = combine(running, buffer[THREAD_ID - 1]);
  /* Each thread overwrites only its own items, after reading them. */
  for (u32 j = 0; j < ITEMS; ++j) {
    u32 k = THREAD_ID * ITEMS + j;
    scan_state x = item(values, head_flags, k);
    if (INCLUSIVE) running = combine(running, x);
    values[PAD(k)] = running.value;
    if (!INCLUSIVE) running = combine(running, x);
  }
  SYNC_THREADS();
  u32 first = BLOCK_ID * TILE;
  for (u32 k = THREAD_ID; k < TILE; k += BLOCK) {
    if (first + k < n) result[first + k] = values[PAD(k)];
  }
}
)";

std::string defines(const scan_options& options) {
  std::string op;
  std::string identity = "0u";
  switch (options.op) {
    case scan_operator::sum:
      op = "((a) + (b))";
      break;
    case scan_operator::bit_or:
      op = "((a) | (b))";
      break;
    case scan_operator::max:
      op = "((a) > (b) ? (a) : (b))";
      break;
  }
  return "#define BLOCK " + std::to_string(scan_block) + "u\n#define ITEMS " +
         std::to_string(detail::scan_items) + "u\n#define OP(a, b) " + op + "\n#define IDENTITY " +
         identity + "\n#define SEGMENTED " + (options.segmented ? "1" : "0") +
         "\n#define EXTRA_HEADS " + (options.segmented ? ", heads" : "") + "\n#define INCLUSIVE " +
         (options.inclusive ? "1" : "0") + "\n#define NONZERO " +
         (options.count_nonzero ? "1" : "0") + "\n";
}

u32 checked_count(const mem_ref<u32>& data) {
  if (data.size() > std::numeric_limits<u32>::max()) {
    throw error{errc::invalid_argument, "scan: " + std::to_string(data.size()) +
                                            " elements; a scan takes at most 2^32 - 1"};
  }
  return static_cast<u32>(data.size());
}

using data_ref = in_out<u32, ref, ref>;

// One signature tag per element of the Heads pack: none for a plain scan.
template <class>
using passed_on = data_ref;
template <class>
using read_in = in<u32, ref>;

// The three stages, with the heads passed along (Heads = one more mem_ref) or not.
template <class... Heads>
actor spawn_stages(actor_system& system, const source& code, const device_set& devices) {
  using range_inputs = std::tuple<nd_range, mem_ref<u32>, Heads..., u32>;
  auto reduce = system.spawn_kernel(
      code, "scan_reduce", nd_range{{1}}, devices,
      map_input([](mem_ref<u32> data, Heads... heads) -> std::optional<range_inputs> {
        if constexpr (sizeof...(Heads) == 1) {
          const auto& head_flags = std::get<0>(std::tie(heads...));
          if (head_flags.size() != data.size()) {
            throw error{errc::invalid_argument, "segmented scan: " + std::to_string(data.size()) +
                                                    " values but " +
                                                    std::to_string(head_flags.size()) + " heads"};
          }
        }
        const u32 n = checked_count(data);
        return range_inputs{tiles_range(n), std::move(data), std::move(heads)..., n};
      }),
      data_ref{}, passed_on<Heads>{}..., out<u32, ref>{[](const request_shape& shape) {
        return 2 * blocks_for(shape.sizes[0], scan_tile);
      }},
      priv<u32, val>{});
  using tile_inputs = std::tuple<mem_ref<u32>, Heads..., mem_ref<u32>, u32>;
  auto scan_totals = system.spawn_kernel(
      code, "scan_totals", nd_range{{scan_block}, {scan_block}}, devices,
      map_input(
          [](mem_ref<u32> data, Heads... heads, mem_ref<u32> totals) -> std::optional<tile_inputs> {
            const auto tiles = static_cast<u32>(totals.size() / 2);
            return tile_inputs{std::move(data), std::move(heads)..., std::move(totals), tiles};
          }),
      data_ref{}, passed_on<Heads>{}..., in_out<u32, ref, ref>{}, priv<u32, val>{});
  using final_inputs = std::tuple<nd_range, mem_ref<u32>, Heads..., mem_ref<u32>, u32>;
  auto scan_tiles = system.spawn_kernel(
      code, "scan_tiles", nd_range{{1}}, devices,
      map_input([](mem_ref<u32> data, Heads... heads,
                   mem_ref<u32> prefixes) -> std::optional<final_inputs> {
        const u32 n = checked_count(data);
        return final_inputs{tiles_range(n), std::move(data), std::move(heads)...,
                            std::move(prefixes), n};
      }),
      in<u32, ref>{}, read_in<Heads>{}..., in<u32, ref>{},
      out<u32, ref>{[](const request_shape& shape) { return shape.sizes[0]; }}, priv<u32, val>{});
  return scan_tiles * scan_totals * reduce;
}

}  // namespace

actor spawn_scan(actor_system& system, device_set devices, scan_options options) {
  if (options.segmented && !options.inclusive) {
    throw error{errc::invalid_argument, "spawn_scan: a segmented scan is inclusive only"};
  }
  const source code = portable_source(defines(options) + scan_body);
  if (options.segmented) return spawn_stages<mem_ref<u32>>(system, code, devices);
  return spawn_stages<>(system, code, devices);
}

}  // namespace troupe::kernel
