#include "troupe/kernel/radix_sort.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <string>
#include <tuple>

#include "kernel/primitives/scan_kernels.hpp"
#include "troupe/core/request.hpp"
#include "troupe/kernel/portable_source.hpp"
#include "troupe/kernel/scan.hpp"
#include "troupe/kernel/spawn_kernel.hpp"

namespace troupe::kernel {

namespace {

using u32 = std::uint32_t;
using ref32 = mem_ref<u32>;
using detail::blocks_for;
using detail::scan_tile;
using detail::tiles_range;

constexpr u32 radix_bits = 4;

// A tile is scan_tile keys, one block of scan_block threads (BLOCK and ITEMS are defined from
// them at spawn, as the host sizes the counts and ranges by them).
constexpr const char* radix_body = R"(
#define TILE (BLOCK * ITEMS)
#define RADIX (1u << RADIX_BITS)
#define PAD(k) ((k) + ((k) >> 5)) /* no bank conflicts when a thread walks its own items */

/* Per tile, how many keys have each digit: counts[digit * tiles + tile]. */
KERNEL void radix_histogram(GLOBAL const u32* keys, GLOBAL u32* counts, u32 n, u32 shift) {
  SHARED u32 bins[RADIX];
  if (THREAD_ID < RADIX) bins[THREAD_ID] = 0;
  SYNC_THREADS();
  u32 first = BLOCK_ID * TILE;
  for (u32 k = THREAD_ID; k < TILE; k += BLOCK) {
    if (first + k < n) ATOMIC_ADD(&bins[(keys[first + k] >> shift) & (RADIX - 1)], 1u);
  }
  SYNC_THREADS();
  if (THREAD_ID < RADIX) counts[THREAD_ID * GRID_DIM + BLOCK_ID] = bins[THREAD_ID];
}

FN u32 block_exclusive_sum(u32 x, SHARED_PTR u32* buffer) {
  buffer[THREAD_ID] = x;
  SYNC_THREADS();
  for (u32 offset = 1; offset < BLOCK; offset <<= 1) {
    u32 y = buffer[THREAD_ID];
    if (THREAD_ID >= offset) y += buffer[THREAD_ID - offset];
    SYNC_THREADS();
    buffer[THREAD_ID] = y;
    SYNC_THREADS();
  }
  return buffer[THREAD_ID] - x;
}

/* A stable scatter of each tile by digit: the tile is sorted by digit in shared memory first,
   so that each digit's run is written to its place (offsets: the scanned counts) coalesced. */
KERNEL void radix_scatter(GLOBAL const u32* keys, GLOBAL const u32* values,
                          GLOBAL const u32* offsets, GLOBAL u32* keys_out, GLOBAL u32* values_out,
                          u32 n, u32 shift) {
  SHARED u32 tile_keys[PAD(TILE)];
  SHARED u32 tile_values[PAD(TILE)];
  SHARED u32 ranks[RADIX * BLOCK]; /* [digit * BLOCK + thread] */
  SHARED u32 buffer[BLOCK];
  SHARED u32 digit_start[RADIX];
  SHARED u32 digit_target[RADIX];
  u32 first = BLOCK_ID * TILE;
  u32 valid = n - first < TILE ? n - first : TILE;
  for (u32 k = THREAD_ID; k < valid; k += BLOCK) {
    tile_keys[PAD(k)] = keys[first + k];
    tile_values[PAD(k)] = values[first + k];
  }
  SYNC_THREADS();

  /* This thread's items, and how many of each digit they hold. */
  u32 own_keys[ITEMS], own_values[ITEMS], seen[RADIX];
  for (u32 d = 0; d < RADIX; ++d) seen[d] = 0;
  for (u32 j = 0; j < ITEMS; ++j) {
    u32 k = THREAD_ID * ITEMS + j;
    if (k < valid) {
      own_keys[j] = tile_keys[PAD(k)];
      own_values[j] = tile_values[PAD(k)];
      ++seen[(own_keys[j] >> shift) & (RADIX - 1)];
    }
  }
  for (u32 d = 0; d < RADIX; ++d) ranks[d * BLOCK + THREAD_ID] = seen[d];
  SYNC_THREADS();

  /* Exclusive scan of ranks in digit-major order: each thread takes RADIX entries. */
  u32 sum = 0;
  for (u32 q = 0; q < RADIX; ++q) sum += ranks[THREAD_ID * RADIX + q];
  u32 running = block_exclusive_sum(sum, buffer);
  for (u32 q = 0; q < RADIX; ++q) {
    u32 count = ranks[THREAD_ID * RADIX + q];
    ranks[THREAD_ID * RADIX + q] = running;
    running += count;
  }
  SYNC_THREADS();
  if (THREAD_ID < RADIX) {
    digit_start[THREAD_ID] = ranks[THREAD_ID * BLOCK];
    digit_target[THREAD_ID] = offsets[THREAD_ID * GRID_DIM + BLOCK_ID];
  }
  for (u32 d = 0; d < RADIX; ++d) seen[d] = ranks[d * BLOCK + THREAD_ID];
  for (u32 j = 0; j < ITEMS; ++j) {
    if (THREAD_ID * ITEMS + j < valid) {
      u32 place = seen[(own_keys[j] >> shift) & (RADIX - 1)]++;
      tile_keys[PAD(place)] = own_keys[j];
      tile_values[PAD(place)] = own_values[j];
    }
  }
  SYNC_THREADS();
  for (u32 k = THREAD_ID; k < valid; k += BLOCK) {
    u32 key = tile_keys[PAD(k)];
    u32 d = (key >> shift) & (RADIX - 1);
    u32 target = digit_target[d] + k - digit_start[d];
    keys_out[target] = key;
    values_out[target] = tile_values[PAD(k)];
  }
}
)";

u32 count_of(const ref32& data) {
  return static_cast<u32>(data.size());
}

/// The actors a sort runs through.
struct sort_stages {
  actor largest;    // scan with max: its last element is the largest key
  actor histogram;  // digit counts per tile
  actor offsets;    // exclusive sum of the counts
  actor scatter;    // the stable scatter
};

/// The passes of the radix sort from `shift` on, each enqueued once the one before has answered
/// (at once: its outputs are mem_refs).
future<message> radix_passes(const sort_stages& stages, ref32 keys, ref32 values, u32 shift,
                             u32 end) {
  if (shift >= end) return make_ready_future(make_message(std::move(keys), std::move(values)));
  return request<ref32>(stages.histogram, keys, shift)
      .then([stages](ref32 counts) { return request<ref32>(stages.offsets, std::move(counts)); })
      .then([stages, keys, values, shift](ref32 offsets) {
        return request<message>(stages.scatter, keys, values, std::move(offsets), shift);
      })
      .then([stages, shift, end](message sorted) {
        return radix_passes(stages, sorted.get_as<ref32>(0), sorted.get_as<ref32>(1),
                            shift + radix_bits, end);
      });
}

std::optional<std::string> check(const ref32& keys, const ref32& values) {
  if (!keys.valid()) return "the keys mem_ref is empty";
  if (!values.valid()) return "the values mem_ref is empty";
  if (keys.size() != values.size()) {
    return std::to_string(keys.size()) + " keys but " + std::to_string(values.size()) + " values";
  }
  if (!(keys.device() == values.device())) {
    return "the keys are on " + keys.device().name() + ", the values on " + values.device().name() +
           " (move them with mem_ref::copy_to)";
  }
  if (keys.size() > std::numeric_limits<u32>::max()) {
    return std::to_string(keys.size()) + " keys; a sort takes at most 2^32 - 1";
  }
  return std::nullopt;
}

}  // namespace

actor spawn_radix_sort(actor_system& system, device_set devices) {
  const source code =
      portable_source("#define BLOCK " + std::to_string(detail::scan_block) + "u\n#define ITEMS " +
                      std::to_string(detail::scan_items) + "u\n#define RADIX_BITS " +
                      std::to_string(radix_bits) + "u\n" + radix_body);
  const size_rule same_size = [](const request_shape& shape) { return shape.sizes[0]; };
  sort_stages stages;
  stages.largest = spawn_scan(system, devices, {scan_operator::max, true, false, false});
  stages.histogram = system.spawn_kernel(
      code, "radix_histogram", nd_range{{1}}, devices,
      map_input([](ref32 keys, u32 shift) -> std::optional<std::tuple<nd_range, ref32, u32, u32>> {
        const u32 n = count_of(keys);
        return std::tuple{tiles_range(n), std::move(keys), n, shift};
      }),
      in<u32, ref>{}, out<u32, ref>{[](const request_shape& shape) {
        return (1u << radix_bits) * blocks_for(shape.sizes[0], scan_tile);
      }},
      priv<u32, val>{}, priv<u32, val>{});
  stages.offsets = spawn_scan(system, devices, {scan_operator::sum, false, false, false});
  stages.scatter = system.spawn_kernel(
      code, "radix_scatter", nd_range{{1}}, devices,
      map_input([](ref32 keys, ref32 values, ref32 offsets, u32 shift)
                    -> std::optional<std::tuple<nd_range, ref32, ref32, ref32, u32, u32>> {
        const u32 n = count_of(keys);
        return std::tuple{tiles_range(n), std::move(keys), std::move(values), std::move(offsets), n,
                          shift};
      }),
      in<u32, ref>{}, in<u32, ref>{}, in<u32, ref>{}, out<u32, ref>{same_size},
      out<u32, ref>{same_size}, priv<u32, val>{}, priv<u32, val>{});
  // The number of passes follows from the largest key: one number read back.
  return system.spawn([stages](ref32 keys, ref32 values) -> future<message> {
    if (auto problem = check(keys, values)) {
      return make_exceptional_future<message>(
          error{errc::invalid_argument, "radix sort: " + *problem});
    }
    const std::size_t n = keys.size();
    return request<ref32>(stages.largest, keys)
        .then([n](ref32 maxima) { return maxima.memory().read(n - 1, 1, after(maxima.ready())); })
        .then([stages, keys, values](std::vector<u32> largest) {
          const auto bits = static_cast<u32>(std::bit_width(largest.at(0)));
          const u32 end = std::max(radix_bits, (bits + radix_bits - 1) / radix_bits * radix_bits);
          return radix_passes(stages, keys, values, 0, end);
        });
  });
}

}  // namespace troupe::kernel
