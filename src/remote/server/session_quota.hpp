// What one session may hold on the server at once: device memory, host memory held for its
// transfers, and OpenCL objects. A client past a quota fails the call that asked for more; the
// server and the other sessions go on.
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "troupe/remote/server_options.hpp"

namespace troupe::remote::server {

/// The things a session's quota bounds.
enum class quota_resource { device_memory, host_memory, objects };

/// One session's quotas and what it uses of them now. Thread-safe: every connection of the
/// session takes from it.
class session_quota {
 public:
  // -- member types ---------------------------------------------------------

  /// An amount taken from a quota; given back when destroyed. Empty when default-made.
  class charge {
   public:
    charge() = default;
    charge(charge&& other) noexcept;
    charge& operator=(charge&& other) noexcept;
    charge(const charge&) = delete;
    charge& operator=(const charge&) = delete;
    ~charge();

    /// How much it holds (0 when empty).
    [[nodiscard]] std::uint64_t amount() const { return amount_; }

   private:
    friend class session_quota;
    charge(std::shared_ptr<std::atomic<std::uint64_t>> used, std::uint64_t amount)
        : used_(std::move(used)), amount_(amount) {}
    std::shared_ptr<std::atomic<std::uint64_t>> used_;
    std::uint64_t amount_ = 0;
  };

  /// Writes one refusal to the server's log.
  using logger = std::function<void(const std::string&)>;

  // -- constructors ---------------------------------------------------------

  /// The quotas of session `session_id` from the server's options (0: no limit); refusals are
  /// written to `log`.
  session_quota(std::uint64_t session_id, const server_options& options, logger log);

  // -- properties -----------------------------------------------------------

  /// What the session uses of `resource` now.
  [[nodiscard]] std::uint64_t used(quota_resource resource) const;

  // -- operations -----------------------------------------------------------

  /// Takes `amount` of `resource` for `what` (the OpenCL call); past the quota, logs the
  /// refusal and throws cl_failure with CL_MEM_OBJECT_ALLOCATION_FAILURE (device memory) or
  /// CL_OUT_OF_RESOURCES, naming the quota, its value, the session and what was asked.
  charge take(quota_resource resource, std::uint64_t amount, const char* what);
  /// Takes `amount` of `resource` if the quota has room; nothing (and no log) otherwise.
  std::optional<charge> try_take(quota_resource resource, std::uint64_t amount);
  /// Logs a refusal of this session's request (any kind, not only quotas) and throws
  /// cl_failure{code, message}.
  [[noreturn]] void refuse(cl_int code, const std::string& message) const;

 private:
  struct account {
    std::uint64_t limit = 0;
    std::shared_ptr<std::atomic<std::uint64_t>> used =
        std::make_shared<std::atomic<std::uint64_t>>(0);
  };
  const std::uint64_t session_id_;
  account accounts_[3];
  logger log_;
};

}  // namespace troupe::remote::server
