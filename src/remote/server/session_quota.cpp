#include "remote/server/session_quota.hpp"

#include <utility>

#include "remote/server/session.hpp"

namespace troupe::remote::server {

namespace {

const char* quota_name(quota_resource resource) {
  switch (resource) {
    case quota_resource::device_memory:
      return "device memory quota (--session-device-memory)";
    case quota_resource::host_memory:
      return "host memory quota (--session-host-memory)";
    case quota_resource::objects:
      return "object quota (--session-objects)";
  }
  return "quota";
}

const char* unit(quota_resource resource) {
  return resource == quota_resource::objects ? " objects" : " bytes";
}

}  // namespace

session_quota::charge::charge(charge&& other) noexcept
    : used_(std::move(other.used_)), amount_(std::exchange(other.amount_, 0)) {}

session_quota::charge& session_quota::charge::operator=(charge&& other) noexcept {
  if (this != &other) {
    if (used_) used_->fetch_sub(amount_, std::memory_order_relaxed);
    used_ = std::move(other.used_);
    amount_ = std::exchange(other.amount_, 0);
  }
  return *this;
}

session_quota::charge::~charge() {
  if (used_) used_->fetch_sub(amount_, std::memory_order_relaxed);
}

session_quota::session_quota(std::uint64_t session_id, const server_options& options, logger log)
    : session_id_(session_id), log_(std::move(log)) {
  accounts_[static_cast<int>(quota_resource::device_memory)].limit = options.session_device_memory;
  accounts_[static_cast<int>(quota_resource::host_memory)].limit = options.session_host_memory;
  accounts_[static_cast<int>(quota_resource::objects)].limit = options.session_objects;
}

std::uint64_t session_quota::used(quota_resource resource) const {
  return accounts_[static_cast<int>(resource)].used->load(std::memory_order_relaxed);
}

std::optional<session_quota::charge> session_quota::try_take(quota_resource resource,
                                                             std::uint64_t amount) {
  const account& taken_from = accounts_[static_cast<int>(resource)];
  auto& used = *taken_from.used;
  std::uint64_t now = used.load(std::memory_order_relaxed);
  std::uint64_t after = 0;
  do {
    bool over = __builtin_add_overflow(now, amount, &after);
    if (taken_from.limit != 0 && (over || after > taken_from.limit)) return std::nullopt;
  } while (!used.compare_exchange_weak(now, after, std::memory_order_relaxed));
  return charge(taken_from.used, amount);
}

session_quota::charge session_quota::take(quota_resource resource, std::uint64_t amount,
                                          const char* what) {
  if (auto taken = try_take(resource, amount)) return std::move(*taken);
  const account& refused_by = accounts_[static_cast<int>(resource)];
  refuse(resource == quota_resource::device_memory ? CL_MEM_OBJECT_ALLOCATION_FAILURE
                                                   : CL_OUT_OF_RESOURCES,
         std::string(what) + " would pass the session's " + quota_name(resource) + " of " +
             std::to_string(refused_by.limit) + unit(resource) + ": " +
             std::to_string(used(resource)) + " in use, " + std::to_string(amount) + " more asked");
}

void session_quota::refuse(cl_int code, const std::string& message) const {
  if (log_) log_("session " + std::to_string(session_id_) + ": refused: " + message);
  throw cl_failure{code, message};
}

}  // namespace troupe::remote::server
