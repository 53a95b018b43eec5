#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <thread>

#include "wah_index.hpp"

namespace troupe::wah {

namespace {

// A (value, row) pair as value << 32 | row: sorting by the high half keeps rows in order.
using pair = std::uint64_t;

/// Runs f(t) for t in [0, threads) on that many threads (the caller's among them).
template <class F>
void in_parallel(unsigned threads, F f) {
  std::vector<std::jthread> others;
  others.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) others.emplace_back([&f, t] { f(t); });
  f(0);
}

/// [begin, end) of part t of n items split into `parts`.
std::pair<std::size_t, std::size_t> part_of(std::size_t n, unsigned parts, unsigned t) {
  return {n * t / parts, n * (t + 1) / parts};
}

/// LSD radix sort by the value half, 8 bits a pass, as many passes as the largest value needs.
/// Each thread counts its part's digits, then scatters it: stable, so rows stay in order.
void sort_by_value(std::vector<pair>& pairs, u32 largest, unsigned threads) {
  std::vector<pair> other(pairs.size());
  std::vector<std::array<std::size_t, 256>> counts(threads);
  const int passes = std::max(1, static_cast<int>(std::bit_width(largest) + 7) / 8);
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = 32 + 8 * pass;
    in_parallel(threads, [&](unsigned t) {
      auto [begin, end] = part_of(pairs.size(), threads, t);
      counts[t].fill(0);
      for (std::size_t i = begin; i < end; ++i) ++counts[t][(pairs[i] >> shift) & 0xff];
    });
    // Digit-major, thread-minor: where each thread's run of each digit starts.
    std::size_t next = 0;
    for (std::size_t digit = 0; digit < 256; ++digit) {
      for (unsigned t = 0; t < threads; ++t) {
        const std::size_t count = counts[t][digit];
        counts[t][digit] = next;
        next += count;
      }
    }
    in_parallel(threads, [&](unsigned t) {
      auto [begin, end] = part_of(pairs.size(), threads, t);
      auto& position = counts[t];
      for (std::size_t i = begin; i < end; ++i)
        other[position[(pairs[i] >> shift) & 0xff]++] = pairs[i];
    });
    pairs.swap(other);
  }
}

/// The index of the sorted pairs [begin, end), which start and end at value boundaries.
wah_index encode(const std::vector<pair>& pairs, std::size_t begin, std::size_t end) {
  wah_index part;
  u32 chunk = 0, literal = 0, last_chunk = 0;
  bool first_chunk = true;
  auto flush = [&] {
    const u32 gap = first_chunk ? chunk : chunk - last_chunk - 1;
    if (gap != 0) part.words.push_back(fill_bit | gap);
    part.words.push_back(literal);
    last_chunk = chunk;
    first_chunk = false;
  };
  for (std::size_t i = begin; i < end; ++i) {
    const auto value = static_cast<u32>(pairs[i] >> 32);
    const auto row = static_cast<u32>(pairs[i]);
    const bool new_value = i == begin || value != part.values.back();
    if (new_value || row / rows_per_word != chunk) {
      if (i != begin) flush();
      if (new_value) {
        part.values.push_back(value);
        part.offsets.push_back(static_cast<u32>(part.words.size()));
        first_chunk = true;
      }
      chunk = row / rows_per_word;
      literal = 0;
    }
    literal |= 1u << (row % rows_per_word);
  }
  if (end != begin) flush();
  return part;
}

}  // namespace

wah_index build_on_cpu(std::span<const u32> column, unsigned threads) {
  if (column.empty()) throw std::invalid_argument("wah: the column is empty");
  if (column.size() > std::numeric_limits<u32>::max()) {
    throw std::invalid_argument("wah: " + std::to_string(column.size()) +
                                " rows; rows are numbered in 32 bits");
  }
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(column.size())));
  std::vector<pair> pairs(column.size());
  std::vector<u32> largest(threads, 0);
  in_parallel(threads, [&](unsigned t) {
    auto [begin, end] = part_of(column.size(), threads, t);
    for (std::size_t i = begin; i < end; ++i) {
      pairs[i] = static_cast<pair>(column[i]) << 32 | static_cast<u32>(i);
      largest[t] = std::max(largest[t], column[i]);
    }
  });
  sort_by_value(pairs, *std::max_element(largest.begin(), largest.end()), threads);

  // Parts that end where a value ends, encoded in parallel, then joined.
  std::vector<std::size_t> bounds{0};
  for (unsigned t = 1; t < threads; ++t) {
    std::size_t cut = std::max(bounds.back(), part_of(pairs.size(), threads, t).first);
    while (cut > 0 && cut < pairs.size() && (pairs[cut] >> 32) == (pairs[cut - 1] >> 32)) ++cut;
    bounds.push_back(cut);
  }
  bounds.push_back(pairs.size());
  std::vector<wah_index> parts(threads);
  in_parallel(threads, [&](unsigned t) { parts[t] = encode(pairs, bounds[t], bounds[t + 1]); });
  if (threads == 1) {
    parts[0].offsets.push_back(static_cast<u32>(parts[0].words.size()));
    return std::move(parts[0]);
  }

  wah_index index;
  std::vector<std::size_t> value_base{0}, word_base{0};
  for (const auto& part : parts) {
    value_base.push_back(value_base.back() + part.values.size());
    word_base.push_back(word_base.back() + part.words.size());
  }
  index.values.resize(value_base.back());
  index.offsets.resize(value_base.back() + 1);
  index.words.resize(word_base.back());
  in_parallel(threads, [&](unsigned t) {
    const auto& part = parts[t];
    std::copy(part.values.begin(), part.values.end(), index.values.begin() + value_base[t]);
    std::copy(part.words.begin(), part.words.end(), index.words.begin() + word_base[t]);
    for (std::size_t v = 0; v < part.offsets.size(); ++v) {
      index.offsets[value_base[t] + v] = static_cast<u32>(word_base[t] + part.offsets[v]);
    }
  });
  index.offsets.back() = static_cast<u32>(index.words.size());
  return index;
}

std::vector<u32> rows_of(const wah_index& index, u32 value) {
  auto found = std::lower_bound(index.values.begin(), index.values.end(), value);
  if (found == index.values.end() || *found != value) return {};
  const auto v = static_cast<std::size_t>(found - index.values.begin());
  std::vector<u32> rows;
  u32 chunk = 0;
  for (u32 w = index.offsets[v]; w < index.offsets[v + 1]; ++w) {
    const u32 word = index.words[w];
    if (word & fill_bit) {
      chunk += word & 0x3fffffffu;
      continue;
    }
    for (u32 bit = 0; bit < rows_per_word; ++bit) {
      if (word & (1u << bit)) rows.push_back(chunk * rows_per_word + bit);
    }
    ++chunk;
  }
  return rows;
}

std::string first_difference(const wah_index& expected, const wah_index& actual) {
  auto compare = [](const char* what, const std::vector<u32>& a,
                    const std::vector<u32>& b) -> std::string {
    const std::size_t common = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < common; ++i) {
      if (a[i] != b[i]) {
        return std::string{what} + "[" + std::to_string(i) + "] is " + std::to_string(b[i]) +
               ", expected " + std::to_string(a[i]);
      }
    }
    if (a.size() != b.size()) {
      return std::string{what} + " has " + std::to_string(b.size()) + " elements, expected " +
             std::to_string(a.size());
    }
    return {};
  };
  for (auto difference : {compare("values", expected.values, actual.values),
                          compare("offsets", expected.offsets, actual.offsets),
                          compare("words", expected.words, actual.words)}) {
    if (!difference.empty()) return difference;
  }
  return {};
}

}  // namespace troupe::wah
