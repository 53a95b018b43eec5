#pragma once

#include <utility>

#include "troupe/core/actor_id.hpp"

namespace troupe {

class abstract_actor;
class actor;
class actor_addr;

/// True if `a` names the actor of `b`. Defined with actor, in actor.hpp: declared inline here,
/// so that a use without actor.hpp fails to compile instead of to link.
inline bool operator==(const actor_addr& a, const actor& b) noexcept;

/// Weak handle: names an actor without keeping it alive (monitors, links, down messages).
class actor_addr {
 public:
  // -- constructors ---------------------------------------------------------

  actor_addr() noexcept = default;
  explicit actor_addr(abstract_actor* ptr) noexcept;
  actor_addr(const actor_addr& other) noexcept;
  actor_addr(actor_addr&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), id_(other.id_) {}
  actor_addr& operator=(actor_addr other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(id_, other.id_);
    return *this;
  }
  ~actor_addr();

  // -- properties -----------------------------------------------------------

  /// True if it names an actor.
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  /// The id of the actor it names (0 for none), even after that actor is gone.
  actor_id id() const noexcept { return id_; }

  /// True if both name the same actor.
  friend bool operator==(const actor_addr& a, const actor_addr& b) noexcept {
    return a.ptr_ == b.ptr_;
  }
  friend bool operator==(const actor_addr& a, const actor& b) noexcept;  // declared above

  // -- operations -----------------------------------------------------------

  /// A strong handle, or an empty one if the actor is gone.
  actor lock() const noexcept;

 private:
  abstract_actor* ptr_ = nullptr;
  actor_id id_ = 0;
};

}  // namespace troupe
