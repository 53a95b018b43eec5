#include "remote/server/token_failures.hpp"

#include <algorithm>

namespace troupe::remote::server {

token_failures::clock::duration token_failures::refused_for(const std::string& address,
                                                            clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto found = records_.find(address);
  if (found == records_.end() || found->second.refused_until <= now) return {};
  return found->second.refused_until - now;
}

void token_failures::failed(const std::string& address, clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto found = records_.find(address);
  if (found == records_.end()) {
    if (records_.size() >= capacity) {
      // Forget the address quiet longest: bounded memory, whoever floods the table.
      records_.erase(
          std::min_element(records_.begin(), records_.end(), [](const auto& a, const auto& b) {
            return a.second.last_failure < b.second.last_failure;
          }));
    }
    found = records_.emplace(address, record{}).first;
  }
  record& entry = found->second;
  if (now - entry.last_failure > forget_after) entry.failures = 0;
  entry.failures += 1;
  entry.last_failure = now;
  if (entry.failures < free_failures) return;
  // 1 s at the last free failure, doubling with each one after it.
  const unsigned doublings = std::min(entry.failures - free_failures, 6u);
  const auto delay = std::min<clock::duration>(std::chrono::seconds(1 << doublings), longest_delay);
  entry.refused_until = now + delay;
}

void token_failures::succeeded(const std::string& address) {
  std::lock_guard lock(mutex_);
  records_.erase(address);
}

}  // namespace troupe::remote::server
