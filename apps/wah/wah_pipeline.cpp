#include "wah_pipeline.hpp"

#include <bit>
#include <limits>
#include <optional>
#include <tuple>

namespace troupe::wah {

namespace {

using namespace troupe::kernel;
using ref32 = mem_ref<u32>;

constexpr std::size_t block = 256;
constexpr std::size_t tile = block * 8;
constexpr u32 radix_bits = 4;

constexpr const char* kernels = R"(
#define BLOCK 256u
#define ITEMS 8u
#define TILE (BLOCK * ITEMS)
#define RADIX 16u
#define ROWS_PER_WORD 31u
#define FILL_BIT 0x80000000u
#define PAD(k) ((k) + ((k) >> 5))

KERNEL void wah_row_ids(GLOBAL const u32* column, GLOBAL u32* rows, u32 n) {
  u32 i = GLOBAL_ID;
  if (i < n) rows[i] = i;
}

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
KERNEL void radix_scatter(GLOBAL const u32* keys, GLOBAL const u32* rows,
                          GLOBAL const u32* offsets, GLOBAL u32* keys_out, GLOBAL u32* rows_out,
                          u32 n, u32 shift) {
  SHARED u32 tile_keys[PAD(TILE)];
  SHARED u32 tile_rows[PAD(TILE)];
  SHARED u32 ranks[RADIX * BLOCK]; /* [digit * BLOCK + thread] */
  SHARED u32 buffer[BLOCK];
  SHARED u32 digit_start[RADIX];
  SHARED u32 digit_target[RADIX];
  u32 first = BLOCK_ID * TILE;
  u32 valid = n - first < TILE ? n - first : TILE;
  for (u32 k = THREAD_ID; k < valid; k += BLOCK) {
    tile_keys[PAD(k)] = keys[first + k];
    tile_rows[PAD(k)] = rows[first + k];
  }
  SYNC_THREADS();

  /* This thread's items, and how many of each digit they hold. */
  u32 own_keys[ITEMS], own_rows[ITEMS], seen[RADIX];
  for (u32 d = 0; d < RADIX; ++d) seen[d] = 0;
  for (u32 j = 0; j < ITEMS; ++j) {
    u32 k = THREAD_ID * ITEMS + j;
    if (k < valid) {
      own_keys[j] = tile_keys[PAD(k)];
      own_rows[j] = tile_rows[PAD(k)];
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
      tile_rows[PAD(place)] = own_rows[j];
    }
  }
  SYNC_THREADS();
  for (u32 k = THREAD_ID; k < valid; k += BLOCK) {
    u32 key = tile_keys[PAD(k)];
    u32 d = (key >> shift) & (RADIX - 1);
    u32 target = digit_target[d] + k - digit_start[d];
    keys_out[target] = key;
    rows_out[target] = tile_rows[PAD(k)];
  }
}

KERNEL void wah_chunks(GLOBAL const u32* keys, GLOBAL const u32* rows, GLOBAL u32* chunks,
                       GLOBAL u32* literals, u32 n) {
  u32 i = GLOBAL_ID;
  if (i >= n) return;
  chunks[i] = rows[i] / ROWS_PER_WORD;
  literals[i] = 1u << (rows[i] % ROWS_PER_WORD);
}

/* Where a run of one (value, chunk) starts (heads) and ends (tails). */
KERNEL void wah_heads(GLOBAL const u32* keys, GLOBAL const u32* chunks, GLOBAL u32* heads,
                      GLOBAL u32* tails, u32 n) {
  u32 i = GLOBAL_ID;
  if (i >= n) return;
  heads[i] = i == 0 || keys[i] != keys[i - 1] || chunks[i] != chunks[i - 1];
  tails[i] = i == n - 1 || keys[i] != keys[i + 1] || chunks[i] != chunks[i + 1];
}

/* Per literal: the fill before it (0 if none), whether it starts its value's bitmap, and how
   many words it makes. */
KERNEL void wah_fills(GLOBAL const u32* keys, GLOBAL const u32* chunks,
                      GLOBAL const u32* literals, GLOBAL u32* fills, GLOBAL u32* value_heads,
                      GLOBAL u32* entry_words, u32 m) {
  u32 j = GLOBAL_ID;
  if (j >= m) return;
  u32 first = j == 0 || keys[j] != keys[j - 1];
  u32 gap = first ? chunks[j] : chunks[j] - chunks[j - 1] - 1;
  fills[j] = gap != 0 ? (FILL_BIT | gap) : 0u;
  value_heads[j] = first;
  entry_words[j] = gap != 0 ? 2u : 1u;
}

/* Fills and literals interleaved; a literal is never 0, so the words to keep are the non-zero
   ones. */
KERNEL void wah_fuse(GLOBAL const u32* fills, GLOBAL const u32* literals, GLOBAL u32* fused,
                     u32 m) {
  u32 j = GLOBAL_ID;
  if (j >= m) return;
  fused[2 * j] = fills[j];
  fused[2 * j + 1] = literals[j];
}
)";

std::size_t rounded(std::size_t n, std::size_t per_block) {
  return (n + per_block - 1) / per_block * block;
}
nd_range items_range(std::size_t n) {
  return nd_range{{rounded(n, block)}, {block}};
}
nd_range tiles_range(std::size_t n) {
  return nd_range{{rounded(n, tile)}, {block}};
}
size_rule like_input(std::size_t position, std::size_t factor = 1) {
  return [position, factor](const request_shape& shape) { return factor * shape.sizes[position]; };
}
u32 count_of(const ref32& data) {
  return static_cast<u32>(data.size());
}
ref32 ref_at(const message& m, std::size_t i) {
  return m.get_as<ref32>(i);
}

/// The actors of the radix sort (stage 2).
struct sort_stages {
  actor largest;    // scan with max: its last element is the largest key
  actor histogram;  // digit counts per tile
  actor offsets;    // exclusive sum of the counts
  actor scatter;    // the stable scatter
};

/// The passes of the radix sort from `shift` on, each enqueued once the one before has answered
/// (at once: its outputs are mem_refs).
future<message> radix_passes(const sort_stages& stages, ref32 keys, ref32 rows, u32 shift,
                             u32 end) {
  if (shift >= end) return make_ready_future(make_message(std::move(keys), std::move(rows)));
  return request<ref32>(stages.histogram, keys, shift)
      .then([stages](ref32 counts) { return request<ref32>(stages.offsets, std::move(counts)); })
      .then([stages, keys, rows, shift](ref32 offsets) {
        return request<message>(stages.scatter, keys, rows, std::move(offsets), shift);
      })
      .then([stages, shift, end](message sorted) {
        return radix_passes(stages, ref_at(sorted, 0), ref_at(sorted, 1), shift + radix_bits, end);
      });
}

}  // namespace

device_builder::device_builder(actor_system& system, const device& dev) {
  const source code = portable_source(kernels);
  const auto here = on(dev);

  auto row_ids = system.spawn_kernel(
      code, "wah_row_ids", nd_range{{1}}, here,
      map_input([](std::vector<u32> column)
                    -> std::optional<std::tuple<nd_range, std::vector<u32>, u32>> {
        if (column.empty()) throw error{errc::invalid_argument, "wah: the column is empty"};
        if (column.size() > std::numeric_limits<u32>::max()) {
          throw error{errc::invalid_argument, "wah: " + std::to_string(column.size()) +
                                                  " rows; rows are numbered in 32 bits"};
        }
        const auto n = static_cast<u32>(column.size());
        return std::tuple{items_range(n), std::move(column), n};
      }),
      in_out<u32, val, ref>{}, out<u32, ref>{like_input(0)}, priv<u32, val>{});

  sort_stages stages;
  stages.largest = spawn_scan(system, here, {scan_operator::max, true, false, false});
  stages.histogram = system.spawn_kernel(
      code, "radix_histogram", nd_range{{1}}, here,
      map_input([](ref32 keys, u32 shift) -> std::optional<std::tuple<nd_range, ref32, u32, u32>> {
        const u32 n = count_of(keys);
        return std::tuple{tiles_range(n), std::move(keys), n, shift};
      }),
      in<u32, ref>{}, out<u32, ref>{[](const request_shape& shape) {
        return (1u << radix_bits) * (rounded(shape.sizes[0], tile) / block);
      }},
      priv<u32, val>{}, priv<u32, val>{});
  stages.offsets = spawn_scan(system, here, {scan_operator::sum, false, false, false});
  stages.scatter = system.spawn_kernel(
      code, "radix_scatter", nd_range{{1}}, here,
      map_input([](ref32 keys, ref32 rows, ref32 offsets, u32 shift)
                    -> std::optional<std::tuple<nd_range, ref32, ref32, ref32, u32, u32>> {
        const u32 n = count_of(keys);
        return std::tuple{tiles_range(n), std::move(keys), std::move(rows), std::move(offsets), n,
                          shift};
      }),
      in<u32, ref>{}, in<u32, ref>{}, in<u32, ref>{}, out<u32, ref>{like_input(0)},
      out<u32, ref>{like_input(0)}, priv<u32, val>{}, priv<u32, val>{});
  // The number of passes follows from the largest key: one number read back.
  auto sort = system.spawn([stages](ref32 keys, ref32 rows) {
    const std::size_t n = keys.size();
    return request<ref32>(stages.largest, keys)
        .then([n](ref32 maxima) { return maxima.memory().read(n - 1, 1, after(maxima.ready())); })
        .then([stages, keys, rows](std::vector<u32> largest) {
          const auto bits = static_cast<u32>(std::bit_width(largest.at(0)));
          const u32 end = std::max(radix_bits, (bits + radix_bits - 1) / radix_bits * radix_bits);
          return radix_passes(stages, keys, rows, 0, end);
        });
  });

  auto chunks = system.spawn_kernel(
      code, "wah_chunks", nd_range{{1}}, here,
      map_input(
          [](ref32 keys, ref32 rows) -> std::optional<std::tuple<nd_range, ref32, ref32, u32>> {
            const u32 n = count_of(keys);
            return std::tuple{items_range(n), std::move(keys), std::move(rows), n};
          }),
      in_out<u32, ref, ref>{}, in<u32, ref>{}, out<u32, ref>{like_input(0)},
      out<u32, ref>{like_input(0)}, priv<u32, val>{});

  auto heads = system.spawn_kernel(
      code, "wah_heads", nd_range{{1}}, here,
      map_input([](ref32 keys,
                   ref32 chunk_ids) -> std::optional<std::tuple<nd_range, ref32, ref32, u32>> {
        const u32 n = count_of(keys);
        return std::tuple{items_range(n), std::move(keys), std::move(chunk_ids), n};
      }),
      in_out<u32, ref, ref>{}, in_out<u32, ref, ref>{}, out<u32, ref>{like_input(0)},
      out<u32, ref>{like_input(0)}, priv<u32, val>{});
  auto merge_bits = spawn_scan(system, here, {scan_operator::bit_or, true, false, true});
  auto runs = system.spawn([heads, merge_bits](ref32 keys, ref32 chunk_ids, ref32 literals) {
    return request<message>(heads, std::move(keys), std::move(chunk_ids))
        .then([merge_bits, literals](message marked) {
          return request<ref32>(merge_bits, literals, ref_at(marked, 2))
              .then([marked](ref32 merged) {
                return make_message(ref_at(marked, 0), ref_at(marked, 1), std::move(merged),
                                    ref_at(marked, 3));
              });
        });
  });

  auto compaction = spawn_compaction(system, here);
  auto one_per_run = system.spawn([compaction](ref32 keys, ref32 chunk_ids, ref32 merged,
                                               ref32 tails) {
    return request<std::vector<ref32>>(compaction, std::vector<ref32>{keys, chunk_ids, merged},
                                       std::move(tails))
        .then([](std::vector<ref32> kept) {
          return make_message(std::move(kept.at(0)), std::move(kept.at(1)), std::move(kept.at(2)));
        });
  });

  auto fills = system.spawn_kernel(
      code, "wah_fills", nd_range{{1}}, here,
      map_input([](ref32 keys, ref32 chunk_ids, ref32 literals)
                    -> std::optional<std::tuple<nd_range, ref32, ref32, ref32, u32>> {
        const u32 m = count_of(keys);
        return std::tuple{items_range(m), std::move(keys), std::move(chunk_ids),
                          std::move(literals), m};
      }),
      in_out<u32, ref, ref>{}, in<u32, ref>{}, in_out<u32, ref, ref>{},
      out<u32, ref>{like_input(0)}, out<u32, ref>{like_input(0)}, out<u32, ref>{like_input(0)},
      priv<u32, val>{});

  // The paper's composition: fuseFillsLiterals, then a compaction of its non-zero words.
  auto fuse = system.spawn_kernel(
      code, "wah_fuse", nd_range{{1}}, here,
      map_input([](ref32 fill_words,
                   ref32 literals) -> std::optional<std::tuple<nd_range, ref32, ref32, u32>> {
        const u32 m = count_of(fill_words);
        return std::tuple{items_range(m), std::move(fill_words), std::move(literals), m};
      }),
      map_output([](ref32 fused) { return make_message(std::vector<ref32>{fused}, fused); }),
      in<u32, ref>{}, in<u32, ref>{}, out<u32, ref>{like_input(0, 2)}, priv<u32, val>{});
  auto fuse_fills_literals = spawn_compaction(system, here) * fuse;
  auto words = system.spawn([fuse_fills_literals](ref32 keys, ref32 literals, ref32 fill_words,
                                                  ref32 value_heads, ref32 entry_words) {
    return request<std::vector<ref32>>(fuse_fills_literals, std::move(fill_words),
                                       std::move(literals))
        .then([keys, value_heads, entry_words](std::vector<ref32> fused) {
          return make_message(std::move(fused.at(0)), keys, value_heads, entry_words);
        });
  });

  auto starts = spawn_scan(system, here, {scan_operator::sum, false, false, false});
  auto lookup_compaction = spawn_compaction(system, here);
  auto lookup = system.spawn([starts, lookup_compaction](ref32 word_list, ref32 keys,
                                                         ref32 value_heads, ref32 entry_words) {
    return request<ref32>(starts, std::move(entry_words))
        .then([lookup_compaction, keys, value_heads](ref32 word_starts) {
          return request<std::vector<ref32>>(
              lookup_compaction, std::vector<ref32>{keys, std::move(word_starts)}, value_heads);
        })
        .then([word_list](std::vector<ref32> table) {
          return make_message(word_list, std::move(table.at(0)), std::move(table.at(1)));
        });
  });

  pipeline_ = lookup * words * fills * one_per_run * runs * chunks * sort * row_ids;
}

future<wah_index> device_builder::build(std::vector<u32> column) const {
  return request<message>(pipeline_, std::move(column)).then([](message built) {
    return when_all(ref_at(built, 0).read(), ref_at(built, 1).read(), ref_at(built, 2).read())
        .then([](std::tuple<future<std::vector<u32>>, future<std::vector<u32>>,
                            future<std::vector<u32>>>
                     parts) {
          wah_index index{std::get<1>(parts).get(), std::get<2>(parts).get(),
                          std::get<0>(parts).get()};
          index.offsets.push_back(static_cast<u32>(index.words.size()));
          return index;
        });
  });
}

}  // namespace troupe::wah
