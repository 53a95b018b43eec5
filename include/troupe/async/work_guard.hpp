#pragma once

#include <utility>

#include "troupe/async/executor.hpp"
#include "troupe/support/intrusive_ptr.hpp"

namespace troupe {

/// Work in flight on an executor, held for as long as the work can still schedule jobs there
/// (executor::work_started until executor::work_finished). The actor system's shutdown ends
/// idle actors only while no guard on its executor is held: a layer that will wake an actor
/// later (a device command that will complete) holds one until it has scheduled what wakes it.
class work_guard {
 public:
  // -- constructors ---------------------------------------------------------

  /// Holds nothing.
  work_guard() noexcept = default;

  /// Counts one piece of work on `ex` until this guard is reset or destroyed.
  explicit work_guard(executor& ex) noexcept : executor_(&ex) { ex.work_started(); }

  /// Counts the same work once more: a copy is held and released on its own.
  work_guard(const work_guard& other) noexcept : executor_(other.executor_) {
    if (executor_) executor_->work_started();
  }

  work_guard(work_guard&& other) noexcept : executor_(std::move(other.executor_)) {}

  work_guard& operator=(work_guard other) noexcept {
    std::swap(executor_, other.executor_);
    return *this;
  }

  ~work_guard() { reset(); }

  // -- properties -----------------------------------------------------------

  /// Whether this guard counts work now.
  bool holds_work() const noexcept { return static_cast<bool>(executor_); }

  // -- operations -----------------------------------------------------------

  /// The work has ended: releases it now instead of at destruction.
  void reset() noexcept {
    if (auto ex = std::move(executor_)) ex->work_finished();
  }

 private:
  detail::intrusive_ptr<executor> executor_;
};

}  // namespace troupe
