#pragma once

#include <cstddef>
#include <functional>
#include <utility>

// A handle is used with what it names: the actor behind it (operator->), its weak address, and
// the messages its monitors and links get. Users of actor get those here too.
#include "troupe/core/abstract_actor.hpp"
#include "troupe/core/actor_addr.hpp"
#include "troupe/core/actor_id.hpp"
#include "troupe/core/system_messages.hpp"

namespace troupe {

/// Strong handle to an actor: the actor stays alive (can receive) while one exists. Cheap to
/// copy; equal handles name the same actor. Actors, scoped actors and composed actors all have
/// this one handle type.
class actor {
 public:
  // -- constructors ---------------------------------------------------------

  actor() noexcept = default;
  actor(const actor& other) noexcept;
  actor(actor&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  actor& operator=(actor other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }
  ~actor();

  /// Adopts one strong reference that the caller already holds.
  static actor adopt(abstract_actor* ptr) noexcept {
    actor result;
    result.ptr_ = ptr;
    return result;
  }

  // -- properties -----------------------------------------------------------

  /// True if it names an actor.
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  /// The actor it names.
  abstract_actor* operator->() const noexcept { return ptr_; }
  /// The actor it names, or null.
  abstract_actor* get() const noexcept { return ptr_; }
  /// The actor's id, or 0 for an empty handle.
  actor_id id() const noexcept;
  /// A weak handle to the same actor.
  actor_addr address() const noexcept;

  /// True if both name the same actor.
  friend bool operator==(const actor& a, const actor& b) noexcept { return a.ptr_ == b.ptr_; }

 private:
  abstract_actor* ptr_ = nullptr;
};

/// True if the weak handle names the actor of `b`.
inline bool operator==(const actor_addr& a, const actor& b) noexcept {
  return a.ptr_ == b.get();
}

}  // namespace troupe

template <>
struct std::hash<troupe::actor> {
  std::size_t operator()(const troupe::actor& a) const noexcept {
    return std::hash<troupe::abstract_actor*>{}(a.get());
  }
};
