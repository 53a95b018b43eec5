// The bulk-synchronous side of the bale kernels, as an MPI programmer writes it (bale's
// "exstack"): items bucketed by the PE they go to, the counts exchanged with MPI_Alltoall and
// the items with MPI_Alltoallv, in supersteps of a bounded number of items per PE.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace bale {

/// Items each PE sends in one superstep at most: bounds the buckets' memory (1 MiB of pairs).
/// bench-pgas's alltoallv_superstep sweep chose it: on 2 PEs, 2^14 to 2^16 were best, and 2^20
/// took 1.2x (histogram) to 2x (index-gather) as long, its buckets out of cache. The apps'
/// --superstep sets it on every PE alike, small to test where supersteps cut the work.
inline std::size_t superstep_items = std::size_t{1} << 16;

/// Calls `step(begin, end)` for this PE's items [begin, end) of `count`, superstep by superstep,
/// as many times on every PE (a PE with fewer items gets empty ranges): each call may exchange.
template <class Step>
void for_each_superstep(std::size_t count, Step&& step) {
  std::uint64_t mine = (count + superstep_items - 1) / superstep_items, steps = 0;
  MPI_Allreduce(&mine, &steps, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  for (std::uint64_t s = 0; s < steps; ++s) {
    const std::size_t begin = std::min<std::size_t>(count, s * superstep_items);
    step(begin, std::min(count, begin + superstep_items));
  }
}

/// One superstep's exchange of `T`s (trivially copyable) between all PEs.
template <class T>
class alltoallv_exchange {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  alltoallv_exchange() {
    int npes = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &npes);
    for (auto* v : {&send_counts_, &send_offsets_, &receive_counts_, &receive_offsets_})
      v->resize(static_cast<std::size_t>(npes));
  }

  /// Buckets `count` items: the i-th, `item(i)`, goes to PE `to(i)`.
  template <class To, class Item>
  void bucket(std::size_t count, To&& to, Item&& item) {
    std::fill(send_counts_.begin(), send_counts_.end(), 0);
    destinations_.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      destinations_[i] = to(i);
      ++send_counts_[static_cast<std::size_t>(destinations_[i])];
    }
    offsets(send_counts_, send_offsets_);
    std::vector<int> next = send_offsets_;
    outgoing_.resize(count);
    places_.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(destinations_[i])]++);
      outgoing_[at] = item(i);
      places_[i] = at;
    }
  }

  /// Sends the buckets; returns what every PE sent here, in PE order.
  std::span<const T> exchange() {
    MPI_Alltoall(send_counts_.data(), 1, MPI_INT, receive_counts_.data(), 1, MPI_INT,
                 MPI_COMM_WORLD);
    offsets(receive_counts_, receive_offsets_);
    incoming_.resize(total(receive_counts_));
    all_to_all(outgoing_.data(), send_counts_, send_offsets_, incoming_.data(), receive_counts_,
               receive_offsets_);
    return incoming_;
  }

  /// Answers what exchange() returned, one `R` per item in its order; returns the answer to each
  /// item this PE bucketed, in bucketing order.
  template <class R>
  std::vector<R> reply(std::span<const R> answers) {
    if (answers.size() != incoming_.size())
      throw std::invalid_argument("alltoallv_exchange::reply: one answer per item received");
    std::vector<R> back(outgoing_.size());
    all_to_all(answers.data(), receive_counts_, receive_offsets_, back.data(), send_counts_,
               send_offsets_);
    std::vector<R> in_order(places_.size());
    for (std::size_t i = 0; i < places_.size(); ++i) in_order[i] = back[places_[i]];
    return in_order;
  }

 private:
  static void offsets(const std::vector<int>& counts, std::vector<int>& starts) {
    int at = 0;
    for (std::size_t p = 0; p < counts.size(); ++p) {
      starts[p] = at;
      at += counts[p];
    }
  }
  static std::size_t total(const std::vector<int>& counts) {
    std::size_t sum = 0;
    for (int c : counts) sum += static_cast<std::size_t>(c);
    return sum;
  }
  // MPI_Alltoallv of elements of type U, as bytes (a superstep's bytes fit an int).
  template <class U>
  static void all_to_all(const U* out, const std::vector<int>& out_counts,
                         const std::vector<int>& out_starts, U* in,
                         const std::vector<int>& in_counts, const std::vector<int>& in_starts) {
    auto bytes = [](const std::vector<int>& elements) {
      std::vector<int> result(elements.size());
      for (std::size_t p = 0; p < elements.size(); ++p) {
        const auto size = static_cast<std::size_t>(elements[p]) * sizeof(U);
        if (size > static_cast<std::size_t>(std::numeric_limits<int>::max()))
          throw std::length_error("alltoallv_exchange: a bucket of more than 2 GiB");
        result[p] = static_cast<int>(size);
      }
      return result;
    };
    const auto out_bytes = bytes(out_counts), out_at = bytes(out_starts);
    const auto in_bytes = bytes(in_counts), in_at = bytes(in_starts);
    MPI_Alltoallv(out, out_bytes.data(), out_at.data(), MPI_BYTE, in, in_bytes.data(), in_at.data(),
                  MPI_BYTE, MPI_COMM_WORLD);
  }

  std::vector<int> destinations_;
  std::vector<int> send_counts_, send_offsets_, receive_counts_, receive_offsets_;
  std::vector<T> outgoing_, incoming_;
  std::vector<std::size_t> places_;  // where the i-th bucketed item lies in outgoing_
};

}  // namespace bale
