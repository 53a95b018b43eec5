#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "device/backend.hpp"
#include "troupe/async/future.hpp"

namespace troupe::net::detail {

/// The end of one command on a device of another node: the server's answer to it. A read's
/// answer carries the bytes, which are copied to their destination before the event ends.
class remote_event final : public troupe::detail::backend_event {
 public:
  /// The `sequence`-th command of queue `queue` on a device whose events share `domain`;
  /// `where` prefixes the errors that come back ("node 1, device 'X'").
  remote_event(const void* domain, std::uint64_t queue, std::uint64_t sequence, std::string where);

  /// Ends the event with `answer`; a read (`destination` not null) first copies its `bytes`.
  void await(future<std::vector<std::byte>> answer, void* destination, std::size_t bytes);

  std::uint64_t queue() const noexcept { return queue_; }
  std::uint64_t sequence() const noexcept { return sequence_; }

  const void* domain() const noexcept override { return domain_; }
  bool query() override;
  void notify(std::function<void()> done) override;

 private:
  void end(std::exception_ptr failure);

  const void* domain_;
  std::uint64_t queue_;
  std::uint64_t sequence_;
  std::string where_;
  std::atomic<bool> ended_{false};
  std::mutex mutex_;  // guards failure_ until ended_, and done_
  std::exception_ptr failure_;
  std::function<void()> done_;
};

}  // namespace troupe::net::detail
