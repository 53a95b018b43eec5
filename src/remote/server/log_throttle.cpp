#include "remote/server/log_throttle.hpp"

namespace troupe::remote::server {

std::optional<std::uint64_t> log_throttle::admit() {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  if (now < next_) {
    ++held_back_;
    return std::nullopt;
  }
  next_ = now + interval_;
  std::uint64_t held = held_back_;
  held_back_ = 0;
  return held;
}

}  // namespace troupe::remote::server
