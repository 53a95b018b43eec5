#pragma once

#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "troupe/async/future.hpp"
#include "troupe/device/dependencies.hpp"
#include "troupe/device/detail/buffer_state.hpp"
#include "troupe/device/detail/device_state.hpp"
#include "troupe/device/detail/program_state.hpp"
#include "troupe/device/detail/queue_state.hpp"
#include "troupe/device/opencl_type_name.hpp"

// The typed halves of buffer commands, shared by buffer<T> (default queue) and device_queue.
namespace troupe::detail {

template <class T>
std::string element_caller(const char* operation) {
  const char* name = troupe::opencl_type_name<T>();
  return std::string{"buffer<"} + (*name != '\0' ? name : "T") + ">::" + operation;
}

/// An error for a range [offset, offset + count) outside `size` elements, or null.
std::exception_ptr check_range(const char* caller, std::size_t offset, std::size_t count,
                               std::size_t size);

/// An error when a buffer or queue handle is empty, or null.
std::exception_ptr check_handles(const char* caller, const queue_state* queue,
                                 const intrusive_ptr<buffer_state>& buffer);

inline future<void> submit_void(queue_state& queue, command cmd, const dependencies& deps) {
  intrusive_ptr<void_result> result{new void_result(queue.device().results()), adopt_ref};
  auto state = result->shared();
  queue.submit(std::move(cmd), deps.list(), std::move(result));
  return future_access::make<future<void>>(std::move(state));
}

/// Fills in a command on `count` elements of `buffer` from `offset`; returns the error of an
/// empty handle or a range outside the buffer instead, if any.
template <class T>
std::exception_ptr describe_command(command& cmd, command::kind what, const char* operation,
                                    const queue_state* queue,
                                    const intrusive_ptr<buffer_state>& buffer, std::size_t offset,
                                    std::size_t count) {
  cmd.what = what;
  cmd.caller = element_caller<T>(operation);
  if (auto e = check_handles(cmd.caller.c_str(), queue, buffer)) return e;
  if (auto e = check_range(cmd.caller.c_str(), offset, count, buffer->bytes() / sizeof(T)))
    return e;
  cmd.buffer = buffer;
  cmd.offset = offset * sizeof(T);
  cmd.bytes = count * sizeof(T);
  return nullptr;
}

template <class T>
future<void> enqueue_write(queue_state* queue, const intrusive_ptr<buffer_state>& buffer,
                           std::size_t offset, const T* source, std::size_t count, bool pinned,
                           intrusive_ptr<ref_counted> keep_alive, const dependencies& deps) {
  command cmd;
  if (auto e =
          describe_command<T>(cmd, command::kind::write, "write", queue, buffer, offset, count))
    return make_exceptional_future<void>(e);
  cmd.host_source = source;
  cmd.pinned = pinned;
  cmd.keep_alive = std::move(keep_alive);
  return submit_void(*queue, std::move(cmd), deps);
}

template <class T>
future<std::vector<T>> enqueue_read(queue_state* queue, const intrusive_ptr<buffer_state>& buffer,
                                    std::size_t offset, std::size_t count,
                                    const dependencies& deps) {
  command cmd;
  if (auto e = describe_command<T>(cmd, command::kind::read, "read", queue, buffer, offset, count))
    return make_exceptional_future<std::vector<T>>(e);
  const bool prepare_later =
      cmd.bytes >= fresh_memory_threshold && queue->stages_reads_of(cmd.bytes);
  intrusive_ptr<vector_result<T>> result{
      new vector_result<T>(queue->device().results(), count, prepare_later,
                           queue->device().fresh()),
      adopt_ref};
  auto state = result->shared();
  cmd.host_destination = result->data();
  cmd.destination_ready = result->gate();
  queue->submit(std::move(cmd), deps.list(), result);
  result->prepare();  // while the device copies into its staging block
  return future_access::make<future<std::vector<T>>>(std::move(state));
}

template <class T>
future<void> enqueue_read_into(queue_state* queue, const intrusive_ptr<buffer_state>& buffer,
                               std::size_t offset, T* destination, std::size_t count, bool pinned,
                               intrusive_ptr<ref_counted> keep_alive, const dependencies& deps) {
  command cmd;
  if (auto e =
          describe_command<T>(cmd, command::kind::read, "read_into", queue, buffer, offset, count))
    return make_exceptional_future<void>(e);
  cmd.host_destination = destination;
  cmd.pinned = pinned;
  cmd.keep_alive = std::move(keep_alive);
  return submit_void(*queue, std::move(cmd), deps);
}

template <class T>
future<void> enqueue_fill(queue_state* queue, const intrusive_ptr<buffer_state>& buffer,
                          const T& value, std::size_t offset, std::size_t count,
                          const dependencies& deps) {
  static_assert(
      sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16,
      "buffer<T>::fill: T must be 1, 2, 4, 8 or 16 bytes (what the devices can fill)");
  command cmd;
  if (auto e = describe_command<T>(cmd, command::kind::fill, "fill", queue, buffer, offset, count))
    return make_exceptional_future<void>(e);
  std::memcpy(cmd.pattern.data(), &value, sizeof(T));
  cmd.pattern_size = sizeof(T);
  return submit_void(*queue, std::move(cmd), deps);
}

template <class T>
future<void> enqueue_copy(queue_state* queue, const intrusive_ptr<buffer_state>& source,
                          std::size_t source_offset, const intrusive_ptr<buffer_state>& target,
                          std::size_t target_offset, std::size_t count, const dependencies& deps) {
  auto caller = element_caller<T>("copy");
  if (auto e = check_handles(caller.c_str(), queue, source))
    return make_exceptional_future<void>(e);
  if (auto e = check_handles((caller + " (target)").c_str(), queue, target))
    return make_exceptional_future<void>(e);
  if (auto e = check_range((caller + " (source)").c_str(), source_offset, count,
                           source->bytes() / sizeof(T)))
    return make_exceptional_future<void>(e);
  if (auto e = check_range((caller + " (target)").c_str(), target_offset, count,
                           target->bytes() / sizeof(T)))
    return make_exceptional_future<void>(e);
  command cmd;
  cmd.what = command::kind::copy;
  cmd.caller = std::move(caller);
  cmd.buffer = source;
  cmd.target = target;
  cmd.offset = source_offset * sizeof(T);
  cmd.target_offset = target_offset * sizeof(T);
  cmd.bytes = count * sizeof(T);
  return submit_void(*queue, std::move(cmd), deps);
}

}  // namespace troupe::detail
