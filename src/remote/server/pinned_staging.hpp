// Reads land in, and writes leave from, pinned memory the session keeps: a device copies to and
// from page-locked memory at full speed (NVIDIA copies pageable memory through a staging buffer
// of its own, at a fraction of it), and nothing is allocated, faulted in or zeroed per transfer.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "remote/server/session_quota.hpp"

namespace troupe::remote::server {

class context_staging;

/// One pinned buffer lent to a transfer; it goes back to its pool when destroyed. Empty when the
/// session could not lend one (then the transfer uses plain memory).
class staging_lease {
 public:
  staging_lease() = default;
  staging_lease(std::shared_ptr<context_staging> pool, cl_mem buffer, std::byte* host,
                std::size_t size, session_quota::charge charge);
  staging_lease(staging_lease&& other) noexcept;
  staging_lease& operator=(staging_lease&& other) noexcept;
  staging_lease(const staging_lease&) = delete;
  staging_lease& operator=(const staging_lease&) = delete;
  ~staging_lease();

  explicit operator bool() const { return host_ != nullptr; }
  [[nodiscard]] std::byte* data() const { return host_; }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  void give_back();
  std::shared_ptr<context_staging> pool_;
  cl_mem buffer_ = nullptr;
  std::byte* host_ = nullptr;
  std::size_t size_ = 0;
  session_quota::charge charge_;  // the buffer's, while it exists (not the transfer's)
};

/// A session's pinned buffers, one pool per context they belong to (pinned memory of one
/// context is pageable to another's queues). Each buffer holds `staging_buffer_size` bytes of
/// the session's host memory quota for as long as it exists.
class pinned_staging {
 public:
  /// Every buffer made is zeroed once: pinned memory may come from another session's.
  static constexpr std::size_t staging_buffer_size = std::size_t{8} << 20;
  /// Smaller transfers use plain memory: allocating and zeroing them costs little.
  static constexpr std::size_t least_staged = std::size_t{64} << 10;

  /// Pools of at most `buffers_per_context` buffers each (server_options::pinned_buffers;
  /// 0: none), charged to `quota`. The default is enough for a large transfer's stripes with
  /// two pieces in flight on each (4 connections; transfers past it use plain memory).
  pinned_staging(session_quota& quota, std::size_t buffers_per_context)
      : quota_(quota), buffers_per_context_(buffers_per_context) {}

  /// A pinned buffer for a transfer of `size` bytes on `queue`, or an empty lease when it is
  /// too small or too large to stage, the pool is exhausted, the quota has no room, or the
  /// platform gives no such memory.
  staging_lease lend(cl_command_queue queue, std::size_t size);
  /// Releases every idle buffer, giving back what they take from the quota (a transfer of the
  /// session needs the room). Lent ones stay; pools make new ones as transfers need them.
  void release_idle();
  /// Drops the pool of `context` (the client released it): its buffers hold no quota for a
  /// context that may see no more transfers. A transfer on one of its queues makes a new pool.
  void forget(cl_context context);
  /// Drops every pool (the session is closing); a buffer lent out goes when it comes back.
  void clear();

 private:
  session_quota& quota_;
  const std::size_t buffers_per_context_;
  std::mutex mutex_;
  std::unordered_map<cl_context, std::shared_ptr<context_staging>> pools_;
  bool closed_ = false;
};

}  // namespace troupe::remote::server
