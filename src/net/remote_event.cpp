#include "net/remote_event.hpp"

#include <cstring>
#include <utility>

namespace troupe::net::detail {

remote_event::remote_event(const void* domain, std::uint64_t queue, std::uint64_t first,
                           std::uint64_t last, std::string where)
    : domain_(domain),
      queue_(queue),
      first_(first),
      last_(last),
      where_(std::move(where)),
      unanswered_(last - first + 1) {}

void remote_event::await(future<bulk_bytes> answer, std::span<std::byte> destination,
                         std::uint64_t landing) {
  std::move(answer).then(inline_execution, [self =
                                                troupe::detail::intrusive_ptr<remote_event>{this},
                                            destination, landing](future<bulk_bytes> ended) {
    if (landing != 0) bulk_bytes::forget(landing);
    try {
      auto data = ended.get();
      if (!destination.empty()) {
        if (data.size() != destination.size())
          throw error{errc::device_error, "read of " + std::to_string(destination.size()) +
                                              " bytes: the answer held " +
                                              std::to_string(data.size())};
        if (data.data() != destination.data())  // it did not land in place
          std::memcpy(destination.data(), data.data(), data.size());
      }
      self->part_ended(nullptr);
    } catch (const error& e) {
      self->part_ended(std::make_exception_ptr(error{e.code(), self->where_ + ": " + e.what()}));
    } catch (const std::exception& e) {
      self->part_ended(
          std::make_exception_ptr(error{errc::device_error, self->where_ + ": " + e.what()}));
    }
  });
}

void remote_event::part_ended(std::exception_ptr failure) {
  std::function<void()> done;
  {
    std::lock_guard guard{mutex_};
    if (failure && !failure_) failure_ = std::move(failure);
    if (--unanswered_ != 0) return;
    ended_.store(true, std::memory_order_release);
    done = std::move(done_);
  }
  if (done) done();
}

bool remote_event::query() {
  if (!ended_.load(std::memory_order_acquire)) return false;
  std::lock_guard guard{mutex_};
  if (failure_) std::rethrow_exception(failure_);
  return true;
}

void remote_event::notify(std::function<void()> done) {
  {
    std::lock_guard guard{mutex_};
    if (!ended_.load(std::memory_order_relaxed)) {
      done_ = std::move(done);
      return;
    }
  }
  done();
}

}  // namespace troupe::net::detail
