#pragma once

// A bitmap index of one column of 32-bit values, compressed with word-aligned hybrid (WAH) code,
// built as Fusco et al. build it on GPUs ("Indexing million of packets per second using GPUs"):
// on the host here (wah_cpu.cpp), and by a pipeline of kernel actors (wah_pipeline.hpp).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace troupe::wah {

using u32 = std::uint32_t;

/// Rows per WAH word: a literal holds 31 rows.
inline constexpr u32 rows_per_word = 31;
/// Bit 31 marks a fill word; bits 0-29 count its empty chunks.
inline constexpr u32 fill_bit = 0x80000000u;

/// One WAH bitmap per distinct value. Row r is chunk r / 31, bit r % 31 of that chunk. A bitmap
/// lists the chunks that hold rows, in order: each a literal word (bit 31 clear), preceded by a
/// fill word (bit 31 set, bits 0-29 the number of chunks) when chunks without rows come before
/// it. Only 0-fills occur, and trailing empty chunks are not stored.
struct wah_index {
  std::vector<u32> values;  ///< the distinct values, ascending
  std::vector<u32>
      offsets;  ///< values.size() + 1: values[i]'s words are [offsets[i], offsets[i+1])
  std::vector<u32> words;

  bool operator==(const wah_index&) const = default;
};

/// The index of `column` (row i holds column[i]), built on the host by `threads` threads with
/// a radix sort of (value, row) pairs and one pass over them. One thread is the reference.
/// Throws std::invalid_argument for an empty column, or one of 2^32 rows or more.
wah_index build_on_cpu(std::span<const u32> column, unsigned threads = 1);

/// The rows that hold `value`, decoded from `index` (empty if it has no such value).
std::vector<u32> rows_of(const wah_index& index, u32 value);

/// Where two indexes first differ, for messages; empty when they are equal.
std::string first_difference(const wah_index& expected, const wah_index& actual);

}  // namespace troupe::wah
