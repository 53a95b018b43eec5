#include "remote/server/session.hpp"

#include "remote/server/memory_return.hpp"

namespace troupe::remote::server {

namespace {

struct pending_callback {
  const session* owner_key;  // for forgetting a closing session's entries
  std::weak_ptr<session> owner;
  std::uint64_t callback_id;
};
struct callback_registry {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, pending_callback> entries;
  std::uint64_t next_token = 1;
};
callback_registry& callbacks() {
  static auto* registry = new callback_registry;  // never destroyed: callbacks may come late
  return *registry;
}

}  // namespace

std::uint64_t register_event_callback(session& owner, std::uint64_t callback_id) {
  auto& registry = callbacks();
  std::lock_guard lock(registry.mutex);  // then the session's (as in clear())
  if (owner.closed()) return 0;          // nothing would forget it: token 0 names nothing
  std::uint64_t token = registry.next_token++;
  registry.entries.emplace(token, pending_callback{&owner, owner.weak_from_this(), callback_id});
  return token;
}

std::pair<std::shared_ptr<session>, std::uint64_t> take_event_callback(std::uint64_t token) {
  auto& registry = callbacks();
  std::lock_guard lock(registry.mutex);
  auto found = registry.entries.find(token);
  if (found == registry.entries.end()) return {nullptr, 0};
  std::pair<std::shared_ptr<session>, std::uint64_t> taken{found->second.owner.lock(),
                                                           found->second.callback_id};
  registry.entries.erase(found);
  return taken;
}

cl_object::~cl_object() {
  switch (kind_) {
    case object_kind::device:
      clReleaseDevice(as<cl_device_id>());
      break;
    case object_kind::context:
      if (zero_queue != nullptr) clReleaseCommandQueue(zero_queue);
      clReleaseContext(as<cl_context>());
      break;
    case object_kind::queue:
      clReleaseCommandQueue(as<cl_command_queue>());
      break;
    case object_kind::mem:
      clReleaseMemObject(as<cl_mem>());
      break;
    case object_kind::sampler:
      clReleaseSampler(as<cl_sampler>());
      break;
    case object_kind::program:
      clReleaseProgram(as<cl_program>());
      break;
    case object_kind::kernel:
      clReleaseKernel(as<cl_kernel>());
      break;
    case object_kind::event:
      clReleaseEvent(as<cl_event>());
      break;
    case object_kind::platform:
    case object_kind::none:
      break;
  }
}

void retain_handle(object_kind kind, void* handle) {
  switch (kind) {
    case object_kind::device:
      clRetainDevice(static_cast<cl_device_id>(handle));
      break;
    case object_kind::context:
      clRetainContext(static_cast<cl_context>(handle));
      break;
    case object_kind::queue:
      clRetainCommandQueue(static_cast<cl_command_queue>(handle));
      break;
    case object_kind::mem:
      clRetainMemObject(static_cast<cl_mem>(handle));
      break;
    case object_kind::sampler:
      clRetainSampler(static_cast<cl_sampler>(handle));
      break;
    case object_kind::program:
      clRetainProgram(static_cast<cl_program>(handle));
      break;
    case object_kind::kernel:
      clRetainKernel(static_cast<cl_kernel>(handle));
      break;
    case object_kind::event:
      clRetainEvent(static_cast<cl_event>(handle));
      break;
    case object_kind::platform:
    case object_kind::none:
      break;
  }
}

session::notes_memory_freed::~notes_memory_freed() {
  note_memory_freed();
}

session::session(std::uint64_t id, std::array<std::uint64_t, 2> key, stream_socket* anchor,
                 const server_options& options, session_quota::logger log)
    : id_(id),
      key_(key),
      quota_(id, options, std::move(log)),
      staging_(quota_, options.pinned_buffers),
      anchor_(anchor) {}

void session::add(std::uint64_t id, object_kind kind, void* handle, session_quota::charge memory,
                  session_quota::charge object_charge) {
  auto object = std::make_shared<cl_object>(kind, handle);  // released if refused below
  object->memory_charge = std::move(memory);
  object->object_charge = object_charge.amount() != 0
                              ? std::move(object_charge)
                              : quota_.take(quota_resource::objects, 1, "a new object");
  std::lock_guard lock(mutex_);
  if (id == 0 || id >= first_server_id) {
    throw cl_failure{CL_INVALID_VALUE, "new " + std::string(to_string(kind)) + " id " +
                                           std::to_string(id) + " is outside the client's range"};
  }
  auto [where, inserted] = objects_.try_emplace(id, std::move(object));
  if (!inserted) {
    throw cl_failure{CL_INVALID_VALUE, "new " + std::string(to_string(kind)) + " id " +
                                           std::to_string(id) + " is already in use"};
  }
  ids_by_handle_.try_emplace(handle, id);
}

object_ref session::find(std::uint64_t id, object_kind kind, cl_int invalid) const {
  std::lock_guard lock(mutex_);
  auto where = objects_.find(id);
  if (where == objects_.end() || where->second->kind() != kind) {
    throw cl_failure{invalid, "no " + std::string(to_string(kind)) + " with id " +
                                  std::to_string(id) + " in this session"};
  }
  return where->second;
}

std::uint64_t session::id_for(object_kind kind, void* handle) {
  if (handle == nullptr) return 0;
  std::lock_guard lock(mutex_);
  if (auto known = ids_by_handle_.find(handle); known != ids_by_handle_.end()) {
    return known->second;
  }
  auto charge = quota_.take(quota_resource::objects, 1, "an object the server found");
  retain_handle(kind, handle);
  std::uint64_t id = next_server_id_++;
  auto object = std::make_shared<cl_object>(kind, handle);
  object->object_charge = std::move(charge);
  objects_.emplace(id, std::move(object));
  ids_by_handle_.emplace(handle, id);
  return id;
}

void session::release(std::uint64_t id) {
  object_ref dropped;  // released outside the lock
  {
    std::lock_guard lock(mutex_);
    auto where = objects_.find(id);
    if (where == objects_.end()) {
      throw cl_failure{CL_INVALID_VALUE, "release of id " + std::to_string(id) +
                                             ", which names nothing in this session"};
    }
    dropped = std::move(where->second);
    objects_.erase(where);
    // The handle may be registered under another id too (an object the client created and
    // then found again cannot be, but be exact): remove only this id's entry.
    for (auto it = ids_by_handle_.begin(); it != ids_by_handle_.end(); ++it) {
      if (it->second == id) {
        ids_by_handle_.erase(it);
        break;
      }
    }
  }
  if (dropped->kind() == object_kind::context) staging_.forget(dropped->as<cl_context>());
}

void session::clear() {
  std::unordered_map<std::uint64_t, object_ref> dropped;
  std::vector<cl_event> user_events;
  std::vector<cl_event> unset_user_events;
  std::vector<held_command> held;
  {
    // Closed from here on: what a request still being served adds later is handled on the spot
    // (hold_until_complete, track_user_event, register_event_callback).
    auto& registry = callbacks();
    std::lock_guard registry_lock(registry.mutex);
    std::lock_guard lock(mutex_);
    closed_ = true;
    dropped.swap(objects_);
    ids_by_handle_.clear();
    user_events.swap(user_events_);
    // Those the client has not set, nor is setting, are clear()'s to complete.
    for (cl_event event : user_events) {
      auto [setting, added] = user_event_settings_.try_emplace(event);
      if (added) {
        setting->second.by_clear = true;
        unset_user_events.push_back(event);
      }
    }
    held.swap(held_);
    std::erase_if(registry.entries,
                  [&](const auto& entry) { return entry.second.owner_key == this; });
  }
  // A user event the client never set holds up every command and wait behind it for good, and
  // with them the threads serving this session (clFinish, clWaitForEvents, blocking reads):
  // complete such events, so that those threads return and end. Not failed: PoCL 3.1 asserts
  // and aborts the server while it fails the commands behind one (the fuzzer found it: a replay
  // of its input aborted within 30,000 runs; completing, 60,000 ran clean). Nobody sees those
  // results.
  for (auto event : unset_user_events) clSetUserEventStatus(event, CL_COMPLETE);
  for (auto event : user_events) clReleaseEvent(event);
  // Every held command now ends (nothing it waits for waits on the client any more); its bytes
  // and its event go once it has.
  for (auto& command : held) {
    clWaitForEvents(1, &command.event);
    clReleaseEvent(command.event);
  }
  held.clear();
  staging_.clear();  // its buffers hold references to contexts
  // Kernels and events before what they use: releasing in a fixed order keeps drivers calm.
  for (auto kind :
       {object_kind::event, object_kind::kernel, object_kind::program, object_kind::sampler,
        object_kind::mem, object_kind::queue, object_kind::context, object_kind::device}) {
    for (auto it = dropped.begin(); it != dropped.end();) {
      if (it->second->kind() == kind) {
        it = dropped.erase(it);
      } else {
        ++it;
      }
    }
  }
}

staging_lease session::lend_pinned(cl_command_queue queue, std::size_t size) {
  if (auto lent = staging_.lend(queue, size)) return lent;
  if (size < pinned_staging::least_staged || size > pinned_staging::staging_buffer_size) return {};
  // Finished non-blocking writes keep their buffers until reaped: reap now, then ask again.
  if (!release_finished()) return {};
  return staging_.lend(queue, size);
}

bool session::release_finished() {
  std::vector<held_command> finished;  // released outside the lock
  {
    std::lock_guard lock(mutex_);
    finished = take_finished();
  }
  for (auto& done : finished) clReleaseEvent(done.event);
  return !finished.empty();  // their bytes and charges go with the vector
}

std::vector<session::held_command> session::take_finished() {
  std::vector<held_command> finished;
  std::erase_if(held_, [&](held_command& held) {
    cl_int status = CL_QUEUED;
    clGetEventInfo(held.event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    if (status > CL_COMPLETE) return false;  // failed ones (< 0) are over too
    finished.push_back(std::move(held));
    return true;
  });
  return finished;
}

session_quota::charge session::take_host_memory(std::uint64_t bytes, const char* what) {
  if (auto taken = quota_.try_take(quota_resource::host_memory, bytes)) return std::move(*taken);
  release_finished();
  if (auto taken = quota_.try_take(quota_resource::host_memory, bytes)) return std::move(*taken);
  // Idle pinned read buffers make room too: a transfer needs it more than a pool that waits.
  staging_.release_idle();
  return quota_.take(quota_resource::host_memory, bytes, what);
}

void session::hold_until_complete(cl_event event, host_bytes bytes, session_quota::charge charge) {
  clRetainEvent(event);
  std::vector<held_command> finished;  // released outside the lock
  {
    std::lock_guard lock(mutex_);
    finished = take_finished();
    if (!closed_) {
      held_.push_back({event, std::move(bytes), std::move(charge)});
      event = nullptr;
    }
  }
  for (auto& done : finished) clReleaseEvent(done.event);
  if (event != nullptr) {  // the session closed meanwhile: nothing will release it later
    clWaitForEvents(1, &event);
    clReleaseEvent(event);
  }
}

void session::track_user_event(cl_event event) {
  {
    std::lock_guard lock(mutex_);
    if (!closed_) {
      clRetainEvent(event);
      user_events_.push_back(event);
      return;
    }
  }
  clSetUserEventStatus(event, CL_COMPLETE);  // the session closed meanwhile: as clear() does
}

cl_int session::set_user_event_status(cl_event event, cl_int status) {
  {
    std::lock_guard lock(mutex_);
    auto& setting = user_event_settings_[event];
    if (setting.by_clear) return CL_INVALID_OPERATION;  // the session is closing
    ++setting.calls;
  }
  const cl_int result = clSetUserEventStatus(event, status);
  bool complete_it = false;
  {
    std::lock_guard lock(mutex_);
    auto found = user_event_settings_.find(event);
    --found->second.calls;
    if (result == CL_SUCCESS) found->second.set = true;
    if (found->second.calls == 0 && !found->second.set) {
      // Not set (a bad status, or not a user event): the client may try again. If clear()
      // passed it over meanwhile, completing it is left to this call.
      user_event_settings_.erase(found);
      complete_it = closed_;
    }
  }
  if (complete_it) clSetUserEventStatus(event, CL_COMPLETE);
  return result;
}

bool session::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

std::size_t session::object_count() const {
  std::lock_guard lock(mutex_);
  return objects_.size();
}

std::uint32_t session::add_connection() {
  std::lock_guard lock(progress_mutex_);
  std::uint32_t index = next_connection_++;
  progress_[index] = 0;
  return index;
}

void session::processed(std::uint32_t index, std::uint32_t sequence) {
  {
    std::lock_guard lock(progress_mutex_);
    progress_[index] = sequence;
  }
  progress_changed_.notify_all();
}

void session::remove_connection(std::uint32_t index) {
  {
    std::lock_guard lock(progress_mutex_);
    progress_.erase(index);
  }
  progress_changed_.notify_all();
}

void session::fence(std::uint32_t index, std::uint32_t sequence) {
  std::unique_lock lock(progress_mutex_);
  progress_changed_.wait(lock, [&] {
    auto found = progress_.find(index);
    return fences_closed_ || found == progress_.end() || found->second >= sequence;
  });
}

void session::close_fences() {
  {
    std::lock_guard lock(progress_mutex_);
    fences_closed_ = true;
  }
  progress_changed_.notify_all();
}

bool session::notify(opcode op, const writer& payload) {
  std::lock_guard lock(anchor_mutex_);
  if (anchor_ == nullptr) return false;
  try {
    anchor_->send_frame(op, 0, 0, payload);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void session::close_anchor() {
  std::lock_guard lock(anchor_mutex_);
  anchor_ = nullptr;
}

}  // namespace troupe::remote::server
