// Host memory a command reads into or writes from, kept until the command is over: plain memory
// (a request's payload, a small read) or a pinned buffer the session lent (pinned_staging.hpp).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "remote/server/pinned_staging.hpp"

namespace troupe::remote::server {

class host_bytes {
 public:
  host_bytes() = default;
  // Implicit: a payload taken over is host bytes as it is.
  host_bytes(std::vector<std::byte> plain) : plain_(std::move(plain)) {}  // NOLINT
  explicit host_bytes(staging_lease pinned) : pinned_(std::move(pinned)) {}

  [[nodiscard]] std::byte* data() { return pinned_ ? pinned_.data() : plain_.data(); }
  [[nodiscard]] const std::byte* data() const { return pinned_ ? pinned_.data() : plain_.data(); }
  [[nodiscard]] std::size_t size() const { return pinned_ ? pinned_.size() : plain_.size(); }

 private:
  std::vector<std::byte> plain_;
  staging_lease pinned_;
};

}  // namespace troupe::remote::server
