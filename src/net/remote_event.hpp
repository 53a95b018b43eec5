#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "device/backend.hpp"
#include "net/bulk_bytes.hpp"
#include "troupe/async/future.hpp"

namespace troupe::net::detail {

/// The end of one operation on a device of another node: the server's answers to its commands,
/// the `first`-th to the `last`-th of queue `queue` (a large write or read goes as several).
/// A read's answers arrive in their destination, or are copied there, before the event ends.
class remote_event final : public troupe::detail::backend_event {
 public:
  /// On a device whose events share `domain`; `where` prefixes the errors that come back
  /// ("node 1, device 'X'").
  remote_event(const void* domain, std::uint64_t queue, std::uint64_t first, std::uint64_t last,
               std::string where);

  /// Takes one command's answer; the event ends with the last, failed if any failed. A read's
  /// (`destination` not empty) was to arrive at `landing`.
  void await(future<bulk_bytes> answer, std::span<std::byte> destination = {},
             std::uint64_t landing = 0);

  std::uint64_t queue() const noexcept { return queue_; }
  std::uint64_t first() const noexcept { return first_; }
  std::uint64_t last() const noexcept { return last_; }

  const void* domain() const noexcept override { return domain_; }
  bool query() override;
  void notify(std::function<void()> done) override;

 private:
  void part_ended(std::exception_ptr failure);

  const void* domain_;
  std::uint64_t queue_;
  std::uint64_t first_;
  std::uint64_t last_;
  std::string where_;
  std::atomic<bool> ended_{false};
  std::mutex mutex_;  // guards failure_ and unanswered_ until ended_, and done_
  std::uint64_t unanswered_;
  std::exception_ptr failure_;
  std::function<void()> done_;
};

}  // namespace troupe::net::detail
