#include "troupe/core/actor.hpp"

namespace troupe {

actor::actor(const actor& other) noexcept : ptr_(other.ptr_) {
  if (ptr_ != nullptr) ptr_->add_strong_ref();
}

actor::~actor() {
  if (ptr_ != nullptr) ptr_->release_strong_ref();
}

actor_id actor::id() const noexcept {
  return ptr_ != nullptr ? ptr_->id() : 0;
}

actor_addr actor::address() const noexcept {
  return actor_addr{ptr_};
}

}  // namespace troupe
