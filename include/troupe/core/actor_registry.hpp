#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "troupe/core/actor.hpp"

namespace troupe {

/// Named actors of one actor system. An entry disappears when its actor ends.
class actor_registry {
 public:
  /// Registers `handle` under `name`, replacing any earlier entry.
  void put(const std::string& name, const actor& handle);

  /// The actor registered under `name`, or an empty handle.
  actor get(const std::string& name) const;

  void erase(const std::string& name);

  std::size_t size() const;

  /// Every entry, as it is now.
  std::unordered_map<std::string, actor> snapshot() const;

  /// Drops all entries (at shutdown, so they no longer keep actors alive).
  void clear();

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, actor> entries_;
};

}  // namespace troupe
