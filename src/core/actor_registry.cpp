#include "troupe/core/actor_registry.hpp"

namespace troupe {

void actor_registry::put(const std::string& name, const actor& handle) {
  if (!handle)
    throw error(errc::invalid_argument,
                "actor_registry::put: empty handle for name '" + name + "'");
  {
    std::lock_guard guard{mutex_};
    entries_[name] = handle;
  }
  // Remove the entry when the actor ends, unless the name was given to another actor since.
  handle->attach_hook([this, name, addr = handle.address()](const error&) {
    std::lock_guard guard{mutex_};
    auto it = entries_.find(name);
    if (it != entries_.end() && it->second.id() == addr.id()) entries_.erase(it);
  });
}

actor actor_registry::get(const std::string& name) const {
  std::lock_guard guard{mutex_};
  auto it = entries_.find(name);
  return it != entries_.end() ? it->second : actor{};
}

void actor_registry::erase(const std::string& name) {
  actor removed;  // released outside the lock: it may end the actor, which runs our hook
  std::lock_guard guard{mutex_};
  auto it = entries_.find(name);
  if (it == entries_.end()) return;
  removed = std::move(it->second);
  entries_.erase(it);
}

std::size_t actor_registry::size() const {
  std::lock_guard guard{mutex_};
  return entries_.size();
}

void actor_registry::clear() {
  std::unordered_map<std::string, actor> old;
  {
    std::lock_guard guard{mutex_};
    old.swap(entries_);
  }
}

std::unordered_map<std::string, actor> actor_registry::snapshot() const {
  std::lock_guard guard{mutex_};
  return entries_;
}

}  // namespace troupe
