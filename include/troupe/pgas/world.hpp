#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "troupe/pgas/detail/engine.hpp"

namespace troupe::pgas {

/// How a world aggregates.
struct world_options {
  /// Bytes per aggregation buffer (one per destination PE). 0: the environment variable
  /// TROUPE_PGAS_BUFFER_BYTES, else the default (bench/pgas measures it).
  std::size_t buffer_bytes = 0;
};

/// One PE of an SPMD job, and the job's collectives. It initializes MPI (or adopts an MPI that
/// the program initialized itself), and owns everything its selectors send. Every PE creates
/// its worlds, and their selectors, in the same order.
class world {
 public:
  /// The reduction of a collective.
  enum class reduction { sum, min, max };

  /// Initializes MPI from the command line, unless it is initialized already.
  world(int& argc, char**& argv, world_options options = {});
  /// Initializes MPI without arguments, unless it is initialized already.
  explicit world(world_options options = {});
  ~world();

  world(const world&) = delete;
  world& operator=(const world&) = delete;

  /// This PE's rank, 0..npes()-1.
  int pe() const noexcept { return engine_->pe(); }
  /// The number of PEs.
  int npes() const noexcept { return engine_->npes(); }
  /// Bytes per aggregation buffer.
  std::size_t buffer_bytes() const noexcept { return engine_->buffer_bytes(); }

  /// Waits until every selector that this PE has called done() on has terminated everywhere,
  /// then for every PE; handlers run meanwhile. Throws troupe::error (unhandled_exception) when
  /// a handler threw in a selector that has terminated and nothing has reported it (see
  /// docs/pgas.md, Errors); every PE throws here alike.
  void barrier();

  // Collectives throw, once they have completed, the error of a selector destroyed before
  // anything reported a handler that threw in it (see barrier()).

  /// `value` reduced over all PEs; handlers run while it waits.
  template <class T>
  T all_reduce(T value, reduction op = reduction::sum) {
    reduce(&value, 1, kind_of<T>(), op);
    return value;
  }

  /// `values` reduced element-wise over all PEs; every PE passes as many.
  template <class T>
  std::vector<T> all_reduce(std::span<const T> values, reduction op = reduction::sum) {
    std::vector<T> result(values.begin(), values.end());
    reduce(result.data(), result.size(), kind_of<T>(), op);
    return result;
  }

  /// Each PE's counts[j] goes to PE j; returns what every PE sent to this one, by sender.
  std::vector<std::int64_t> all_to_all(std::span<const std::int64_t> counts);

  /// The transport underneath, for selectors.
  detail::engine& transport() noexcept { return *engine_; }

 private:
  enum class scalar { i32, i64, u32, u64, f32, f64 };
  template <class T>
  static constexpr scalar kind_of() {
    static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                  "world::all_reduce: the values must be numbers (int32/64, uint32/64, float, "
                  "double)");
    if constexpr (std::is_floating_point_v<T>)
      return sizeof(T) == 4 ? scalar::f32 : scalar::f64;
    else if constexpr (std::is_signed_v<T>)
      return sizeof(T) <= 4 ? scalar::i32 : scalar::i64;
    else
      return sizeof(T) <= 4 ? scalar::u32 : scalar::u64;
  }
  void reduce(void* data, std::size_t count, scalar kind, reduction op);

  std::unique_ptr<detail::engine> engine_;
};

}  // namespace troupe::pgas
