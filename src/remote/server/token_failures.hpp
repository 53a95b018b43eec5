// Wrong tokens, counted per address, so that guessing the token takes years instead of hours.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace troupe::remote::server {

/// The addresses that presented wrong tokens lately. After `free_failures` wrong tokens in a
/// row, an address is refused outright, token unchecked, for a delay that doubles with each
/// further wrong token (from one second up to `longest_delay`). A right token clears the
/// address. The table holds at most `capacity` addresses: beyond that the one quiet longest
/// is forgotten.
class token_failures {
 public:
  // -- member types ---------------------------------------------------------

  using clock = std::chrono::steady_clock;

  // -- constants ------------------------------------------------------------

  /// Wrong tokens an address may present before it is slowed down.
  static constexpr unsigned free_failures = 5;
  /// The longest an address is refused after a wrong token.
  static constexpr std::chrono::seconds longest_delay{60};
  /// Addresses remembered at most.
  static constexpr std::size_t capacity = 4096;
  /// An address that presented no wrong token for this long starts afresh.
  static constexpr std::chrono::minutes forget_after{10};

  // -- operations -----------------------------------------------------------

  /// How long `address` is still refused (zero: it may try).
  [[nodiscard]] clock::duration refused_for(const std::string& address, clock::time_point now);
  /// `address` presented a wrong token.
  void failed(const std::string& address, clock::time_point now);
  /// `address` presented the right token: it starts afresh.
  void succeeded(const std::string& address);

 private:
  struct record {
    unsigned failures = 0;
    clock::time_point refused_until{};
    clock::time_point last_failure{};
  };
  std::mutex mutex_;  // guards everything below
  std::unordered_map<std::string, record> records_;
};

}  // namespace troupe::remote::server
