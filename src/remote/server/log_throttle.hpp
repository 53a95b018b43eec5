// A kind of log line that a hostile client could repeat thousands of times a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

namespace troupe::remote::server {

/// Lets one kind of log line through at most once per interval, and counts the lines it holds
/// back, so that a flood of refusals costs one line a second, not a full disk.
class log_throttle {
 public:
  // -- constructors ---------------------------------------------------------

  /// At most one line per `interval`.
  explicit log_throttle(std::chrono::milliseconds interval = std::chrono::seconds(1))
      : interval_(interval) {}

  // -- operations -----------------------------------------------------------

  /// Whether a line may be written now: if so, how many were held back since the last one.
  std::optional<std::uint64_t> admit();

 private:
  const std::chrono::milliseconds interval_;
  std::mutex mutex_;  // guards everything below
  std::chrono::steady_clock::time_point next_{};
  std::uint64_t held_back_ = 0;
};

}  // namespace troupe::remote::server
