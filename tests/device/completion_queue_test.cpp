// The completion queue with events of a fake backend (internal, so tested directly): a driver
// may call back after the event reported itself complete, and after the queue is gone.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <mutex>

#include "device/completion_queue.hpp"
#include "troupe/async/future.hpp"

namespace troupe::detail {
namespace {

/// An event that is complete once told so, and that keeps the callback it is given instead of
/// calling it: the test calls it, when it likes.
class held_callback_event final : public backend_event {
 public:
  const void* domain() const noexcept override { return this; }
  bool query() override { return complete.load(); }
  void notify(std::function<void()> done) override {
    std::lock_guard guard{mutex_};
    callback_ = std::move(done);
  }
  std::function<void()> take_callback() {
    std::lock_guard guard{mutex_};
    return std::move(callback_);
  }
  std::atomic<bool> complete{false};

 private:
  std::mutex mutex_;
  std::function<void()> callback_;
};

TEST(completion_queue, a_driver_that_calls_back_after_the_queue_is_gone_finds_nothing) {
  intrusive_ptr<held_callback_event> first{new held_callback_event, adopt_ref};
  intrusive_ptr<held_callback_event> second{new held_callback_event, adopt_ref};
  intrusive_ptr<void_result> first_result{new void_result({}), adopt_ref};
  intrusive_ptr<void_result> second_result{new void_result({}), adopt_ref};
  auto first_done = future_access::make<future<void>>(first_result->shared());
  auto second_done = future_access::make<future<void>>(second_result->shared());
  std::function<void()> late;
  {
    completion_queue queue{completion_queue::mode::callback};
    queue.watch(first, first_result);
    queue.watch(second, second_result);
    first->complete = true;
    second->complete = true;
    // The second's callback wakes the thread, which finishes both: the first's callback has
    // not come yet.
    auto second_callback = second->take_callback();
    ASSERT_TRUE(second_callback);
    second_callback();
    std::move(first_done).get();
    std::move(second_done).get();
    late = first->take_callback();
    ASSERT_TRUE(late);
  }
  late();  // the queue is gone: it must not be touched (ASan reports it if it is)
}

}  // namespace
}  // namespace troupe::detail
