#include "remote/icd/objects.hpp"

#include <unordered_set>

#include "remote/icd/request.hpp"
#include "remote/icd/server_connection.hpp"

namespace troupe::remote::icd {

namespace {

struct live_set {
  std::mutex mutex;
  std::unordered_set<const void*> objects;
};
live_set& live() {
  static auto* set = new live_set;  // never destroyed: objects may outlive static destruction
  return *set;
}

}  // namespace

remote_object::remote_object(object_kind object_kind, server_connection* owner,
                             std::uint64_t object_id)
    : kind(object_kind), server(owner), id(object_id) {
  std::lock_guard lock(live().mutex);
  live().objects.insert(this);
}

remote_object::~remote_object() {
  std::lock_guard lock(live().mutex);
  live().objects.erase(this);
}

bool is_live_object(const void* pointer) {
  std::lock_guard lock(live().mutex);
  return live().objects.contains(pointer);
}

void destroy_object(remote_object* object) {
  switch (object->kind) {
    case object_kind::platform:
      delete static_cast<_cl_platform_id*>(object);
      break;
    case object_kind::device:
      delete static_cast<_cl_device_id*>(object);
      break;
    case object_kind::context:
      delete static_cast<_cl_context*>(object);
      break;
    case object_kind::queue:
      delete static_cast<_cl_command_queue*>(object);
      break;
    case object_kind::mem:
      delete static_cast<_cl_mem*>(object);
      break;
    case object_kind::sampler:
      delete static_cast<_cl_sampler*>(object);
      break;
    case object_kind::program:
      delete static_cast<_cl_program*>(object);
      break;
    case object_kind::kernel:
      delete static_cast<_cl_kernel*>(object);
      break;
    case object_kind::event:
      delete static_cast<_cl_event*>(object);
      break;
    case object_kind::none:
      break;
  }
}

void release_object(remote_object* object, bool on_server) {
  if (object->references.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (object->kind == object_kind::mem) {
    // Destructor callbacks run in reverse order of registration, once the object is gone.
    auto* memory = static_cast<_cl_mem*>(object);
    for (auto it = memory->destructor_callbacks.rbegin(); it != memory->destructor_callbacks.rend();
         ++it) {
      it->function(memory, it->user_data);
    }
  }
  if (on_server) {
    request dropped(opcode::release);
    dropped.object(object);
    dropped.send(*object->server);
  }
  object->server->forget_object(object->id);
  remote_object* parent = object->parent;
  destroy_object(object);
  if (parent != nullptr) release_object(parent);  // after the child's release frame
}

void hold_parent(remote_object* child, remote_object* parent) {
  if (parent == nullptr) return;
  parent->references.fetch_add(1, std::memory_order_relaxed);
  child->parent = parent;
}

}  // namespace troupe::remote::icd
