#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "troupe/async/error.hpp"
#include "troupe/async/future.hpp"
#include "troupe/async/promise.hpp"
#include "troupe/pgas/selector.hpp"
#include "troupe/pgas/world.hpp"

namespace troupe::pgas {

/// A distributed array with SHMEM-style operations built on a selector, so that every one is
/// aggregated: atomic_add, put_nbi and get_nbi. Global element g lives on PE g % npes at local
/// index g / npes (cyclic, as in bale). Operations are non-blocking; quiet(), called by every
/// PE, completes all of them. Created on every PE, in the same order as other selectors.
template <class T>
class symmetric_array {
  static_assert(std::is_trivially_copyable_v<T>,
                "troupe::pgas::symmetric_array: the elements must be trivially copyable");

 public:
  // -- constructors ---------------------------------------------------------

  /// `local_size` elements on every PE, value-initialized.
  symmetric_array(world& owner, std::size_t local_size) : world_(&owner), local_(local_size) {
    open_round();
  }

  symmetric_array(const symmetric_array&) = delete;
  symmetric_array& operator=(const symmetric_array&) = delete;

  // -- properties -----------------------------------------------------------

  /// This PE's elements.
  std::span<T> local() noexcept { return local_; }
  /// The number of elements over all PEs.
  std::size_t size() const noexcept {
    return local_.size() * static_cast<std::size_t>(world_->npes());
  }

  // -- operations -----------------------------------------------------------

  /// Adds `value` to global element `g`; the owner applies adds one at a time.
  void atomic_add(std::size_t g, T value) {
    static_assert(std::is_arithmetic_v<T>, "symmetric_array::atomic_add needs numbers");
    send(g, op::add, 0, value);
  }

  /// Stores `value` into global element `g`.
  void put_nbi(std::size_t g, T value) { send(g, op::put, 0, value); }

  /// Reads global element `g`; `callback(value)` runs on this PE, inside progress.
  void get_nbi(std::size_t g, std::function<void(T)> callback) {
    tickets_.push_back(std::move(callback));
    send(g, op::get, tickets_.size() - 1, T{});
  }

  /// Reads global element `g`; the future completes inside progress (quiet() at the latest).
  future<T> get_nbi(std::size_t g) {
    auto waiter = std::make_shared<promise<T>>();
    future<T> result = waiter->get_future();
    get_nbi(g, [waiter](T value) { waiter->set_value(value); });
    return result;
  }

  /// Completes every operation that any PE issued before it; every PE calls it. Throws
  /// troupe::error on every PE if a get_nbi callback threw on any (see selector::wait); the
  /// array stays usable.
  void quiet() {
    round_->done(0);
    std::exception_ptr failure;
    try {
      round_->wait();
    } catch (...) {
      if (!round_->terminated()) throw;  // wait() itself was refused: the round goes on
      failure = std::current_exception();
    }
    tickets_.clear();
    round_.reset();
    open_round();
    if (failure) std::rethrow_exception(failure);
  }

 private:
  enum class op : std::uint32_t { add, put, get, reply };
  struct record {
    std::uint64_t index;   // request: the local index; reply: the ticket
    std::uint64_t ticket;  // get: the requester's ticket
    op kind;
    T value;
  };
  using round_selector = selector<2, record>;

  void send(std::size_t g, op kind, std::size_t ticket, T value) {
    if (g >= size())
      throw error(errc::out_of_range, "symmetric_array: element " + std::to_string(g) +
                                          " is out of range; the array has " +
                                          std::to_string(size()));
    const auto npes = static_cast<std::size_t>(world_->npes());
    round_->send(0, static_cast<int>(g % npes), record{g / npes, ticket, kind, value});
  }

  // One selector per round between quiet()s: mailbox 0 takes requests, mailbox 1 get replies.
  void open_round() {
    round_ = std::make_unique<round_selector>(
        *world_, std::array<typename round_selector::handler, 2>{
                     [this](const record& request, int from) {
                       T& element = local_[request.index];
                       switch (request.kind) {
                         case op::add:
                           element += request.value;
                           break;
                         case op::put:
                           element = request.value;
                           break;
                         case op::get:
                           round_->send(1, from, record{request.ticket, 0, op::reply, element});
                           break;
                         case op::reply:
                           break;
                       }
                     },
                     [this](const record& reply, int) { tickets_[reply.index](reply.value); }});
  }

  world* world_;
  std::vector<T> local_;
  std::vector<std::function<void(T)>> tickets_;  // get callbacks of this round, by ticket
  std::unique_ptr<round_selector> round_;
};

}  // namespace troupe::pgas
