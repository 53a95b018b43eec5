#include "troupe/core/actor_addr.hpp"

#include "troupe/core/abstract_actor.hpp"
#include "troupe/core/actor.hpp"

namespace troupe {

actor_addr::actor_addr(abstract_actor* ptr) noexcept : ptr_(ptr) {
  if (ptr_ != nullptr) {
    ptr_->add_weak_ref();
    id_ = ptr_->id();
  }
}

actor_addr::actor_addr(const actor_addr& other) noexcept : ptr_(other.ptr_), id_(other.id_) {
  if (ptr_ != nullptr) ptr_->add_weak_ref();
}

actor_addr::~actor_addr() {
  if (ptr_ != nullptr) ptr_->release_weak_ref();
}

actor actor_addr::lock() const noexcept {
  if (ptr_ != nullptr && ptr_->try_add_strong_ref()) return actor::adopt(ptr_);
  return {};
}

}  // namespace troupe
