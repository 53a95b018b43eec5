#include "net/remote_event.hpp"

#include <cstring>
#include <utility>

namespace troupe::net::detail {

remote_event::remote_event(const void* domain, std::uint64_t queue, std::uint64_t sequence,
                           std::string where)
    : domain_(domain), queue_(queue), sequence_(sequence), where_(std::move(where)) {}

void remote_event::await(future<std::vector<std::byte>> answer, void* destination,
                         std::size_t bytes) {
  std::move(answer).then(inline_execution, [self =
                                                troupe::detail::intrusive_ptr<remote_event>{this},
                                            destination,
                                            bytes](future<std::vector<std::byte>> ended) {
    try {
      auto data = ended.get();
      if (destination != nullptr) {
        if (data.size() != bytes)
          throw error{errc::device_error, "read of " + std::to_string(bytes) +
                                              " bytes: the answer held " +
                                              std::to_string(data.size())};
        std::memcpy(destination, data.data(), bytes);
      }
      self->end(nullptr);
    } catch (const error& e) {
      self->end(std::make_exception_ptr(error{e.code(), self->where_ + ": " + e.what()}));
    } catch (const std::exception& e) {
      self->end(std::make_exception_ptr(error{errc::device_error, self->where_ + ": " + e.what()}));
    }
  });
}

void remote_event::end(std::exception_ptr failure) {
  std::function<void()> done;
  {
    std::lock_guard guard{mutex_};
    failure_ = std::move(failure);
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
