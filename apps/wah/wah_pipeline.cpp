#include "wah_pipeline.hpp"

#include <bit>
#include <chrono>
#include <limits>
#include <optional>
#include <tuple>

namespace troupe::wah {

namespace {

using namespace troupe::kernel;
using ref32 = mem_ref<u32>;

constexpr std::size_t block = 256;

constexpr const char* kernels = R"(
#define ROWS_PER_WORD 31u
#define FILL_BIT 0x80000000u

KERNEL void wah_row_ids(GLOBAL const u32* column, GLOBAL u32* rows, u32 n) {
  u32 i = GLOBAL_ID;
  if (i < n) rows[i] = i;
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

/* Each value's first word, then where the last value's words end: the index's offsets. */
KERNEL void wah_offsets(GLOBAL const u32* starts, GLOBAL u32* offsets, u32 values, u32 words) {
  u32 i = GLOBAL_ID;
  if (i < values) offsets[i] = starts[i];
  else if (i == values) offsets[i] = words;
}
)";

nd_range items_range(std::size_t n) {
  return nd_range{{(n + block - 1) / block * block}, {block}};
}
size_rule like_input(std::size_t position, std::size_t factor = 1) {
  return [position, factor](const request_shape& shape) { return factor * shape.sizes[position]; };
}
u32 checked_rows(std::size_t rows) {
  if (rows == 0) throw error{errc::invalid_argument, "wah: the column is empty"};
  if (rows > std::numeric_limits<u32>::max()) {
    throw error{errc::invalid_argument,
                "wah: " + std::to_string(rows) + " rows; rows are numbered in 32 bits"};
  }
  return static_cast<u32>(rows);
}
u32 count_of(const ref32& data) {
  return static_cast<u32>(data.size());
}
/// The input mapping of a kernel with one work item per element of its first input: the
/// mem_refs as they came, then that element count.
template <class... More>
auto one_item_per_element() {
  return map_input(
      [](ref32 first, More... more) -> std::optional<std::tuple<nd_range, ref32, More..., u32>> {
        const u32 n = count_of(first);
        return std::tuple{items_range(n), std::move(first), std::move(more)..., n};
      });
}
ref32 ref_at(const message& m, std::size_t i) {
  return m.get_as<ref32>(i);
}

}  // namespace

device_builder::device_builder(actor_system& system, const device& dev) {
  const source code = portable_source(kernels);
  const auto here = on(dev);

  // Stage 1 takes the column from the host, or (resident_pipeline) already on the device.
  auto row_ids = system.spawn_kernel(
      code, "wah_row_ids", nd_range{{1}}, here,
      map_input([](std::vector<u32> column)
                    -> std::optional<std::tuple<nd_range, std::vector<u32>, u32>> {
        const u32 n = checked_rows(column.size());
        return std::tuple{items_range(n), std::move(column), n};
      }),
      in_out<u32, val, ref>{}, out<u32, ref>{like_input(0)}, priv<u32, val>{});
  auto resident_row_ids = system.spawn_kernel(
      code, "wah_row_ids", nd_range{{1}}, here,
      map_input([](ref32 column) -> std::optional<std::tuple<nd_range, ref32, u32>> {
        const u32 n = checked_rows(column.size());
        return std::tuple{items_range(n), std::move(column), n};
      }),
      in_out<u32, ref, ref>{}, out<u32, ref>{like_input(0)}, priv<u32, val>{});

  auto sort = spawn_radix_sort(system, here);

  auto chunks =
      system.spawn_kernel(code, "wah_chunks", nd_range{{1}}, here, one_item_per_element<ref32>(),
                          in_out<u32, ref, ref>{}, in<u32, ref>{}, out<u32, ref>{like_input(0)},
                          out<u32, ref>{like_input(0)}, priv<u32, val>{});

  auto heads = system.spawn_kernel(code, "wah_heads", nd_range{{1}}, here,
                                   one_item_per_element<ref32>(), in_out<u32, ref, ref>{},
                                   in_out<u32, ref, ref>{}, out<u32, ref>{like_input(0)},
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

  auto fills = system.spawn_kernel(code, "wah_fills", nd_range{{1}}, here,
                                   one_item_per_element<ref32, ref32>(), in_out<u32, ref, ref>{},
                                   in<u32, ref>{}, in_out<u32, ref, ref>{},
                                   out<u32, ref>{like_input(0)}, out<u32, ref>{like_input(0)},
                                   out<u32, ref>{like_input(0)}, priv<u32, val>{});

  // The paper's composition: fuseFillsLiterals, then a compaction of its non-zero words.
  auto fuse = system.spawn_kernel(
      code, "wah_fuse", nd_range{{1}}, here, one_item_per_element<ref32>(),
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
  // The end offset is added on the device: appended on the host, it would copy the offsets,
  // 80 MB for 20M distinct values, into a new vector twice their size (60 ms on an H200's host).
  auto close_offsets = system.spawn_kernel(
      code, "wah_offsets", nd_range{{1}}, here,
      map_input([](ref32 word_starts,
                   u32 word_count) -> std::optional<std::tuple<nd_range, ref32, u32, u32>> {
        const u32 values = count_of(word_starts);
        return std::tuple{items_range(std::size_t{values} + 1), std::move(word_starts), values,
                          word_count};
      }),
      in<u32, ref>{}, out<u32, ref>{[](const request_shape& shape) { return shape.sizes[0] + 1; }},
      priv<u32, val>{}, priv<u32, val>{});
  auto lookup =
      system.spawn([starts, lookup_compaction, close_offsets](
                       ref32 word_list, ref32 keys, ref32 value_heads, ref32 entry_words) {
        return request<ref32>(starts, std::move(entry_words))
            .then([lookup_compaction, keys, value_heads](ref32 word_starts) {
              return request<std::vector<ref32>>(
                  lookup_compaction, std::vector<ref32>{keys, std::move(word_starts)}, value_heads);
            })
            .then([close_offsets, word_list](std::vector<ref32> table) {
              return request<ref32>(close_offsets, std::move(table.at(1)), count_of(word_list))
                  .then([word_list, values = std::move(table.at(0))](ref32 offsets) {
                    return make_message(word_list, values, std::move(offsets));
                  });
            });
      });

  stages_ = {{"row ids", row_ids},         {"radix sort", sort},        {"chunks", chunks},
             {"heads and scan", runs},     {"compaction", one_per_run}, {"fills", fills},
             {"fuseFillsLiterals", words}, {"lookup", lookup}};
  auto after_row_ids = lookup * words * fills * one_per_run * runs * chunks * sort;
  pipeline_ = after_row_ids * row_ids;
  resident_pipeline_ = after_row_ids * resident_row_ids;
}

std::vector<std::pair<std::string, double>> device_builder::stage_seconds(
    const std::vector<u32>& column) const {
  std::vector<std::pair<std::string, double>> times;
  actor prefix;
  double before = 0;
  for (const auto& [name, stage] : stages_) {
    prefix = prefix ? stage * prefix : stage;
    auto run_once = [&] {
      const auto start = std::chrono::steady_clock::now();
      auto outputs = request<message>(prefix, column).get();
      for (std::size_t i = 0; i < outputs.size(); ++i) ref_at(outputs, i).ready().get();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    run_once();  // warm-up
    double best = run_once();
    for (int repeat = 0; repeat < 2; ++repeat) best = std::min(best, run_once());
    times.emplace_back(name, best - before);
    before = best;
  }
  return times;
}

future<wah_index> device_builder::build(std::vector<u32> column) const {
  return request<message>(pipeline_, std::move(column)).then([](message built) {
    return when_all(ref_at(built, 0).read(), ref_at(built, 1).read(), ref_at(built, 2).read())
        .then([](std::tuple<future<std::vector<u32>>, future<std::vector<u32>>,
                            future<std::vector<u32>>>
                     parts) {
          return wah_index{std::get<1>(parts).get(), std::get<2>(parts).get(),
                           std::get<0>(parts).get()};
        });
  });
}

}  // namespace troupe::wah
