// Events, synchronization and kernel launches.
#include <algorithm>
#include <cstring>
#include <map>

#include "remote/icd/api_support.hpp"

using namespace troupe::remote;
using namespace troupe::remote::icd;

namespace {

cl_int launch(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
              const size_t* global_work_offset, const size_t* global_work_size,
              const size_t* local_work_size, cl_uint num_events_in_wait_list,
              const cl_event* event_wait_list, cl_event* event) {
  if (!valid(kernel, object_kind::kernel)) return CL_INVALID_KERNEL;
  if (work_dim < 1 || work_dim > 3) return CL_INVALID_WORK_DIMENSION;
  if (global_work_size == nullptr) return CL_INVALID_GLOBAL_WORK_SIZE;
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  // Checked before put_command makes the event: releasing an event the server never saw would
  // fail there, and that failure would surface at the next synchronizing call.
  if (kernel->server != queue->server) return CL_INVALID_CONTEXT;
  request launching(opcode::ndrange_kernel);
  if (cl_int status =
          put_command(launching, queue, num_events_in_wait_list, event_wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  launching.object(kernel);
  launching.fields.put<std::uint32_t>(work_dim);
  auto put_sizes = [&](const size_t* sizes) {
    std::vector<std::uint64_t> values;
    if (sizes != nullptr) values.assign(sizes, sizes + work_dim);
    launching.fields.put_array<std::uint64_t>(values);
  };
  put_sizes(global_work_offset);
  put_sizes(global_work_size);
  put_sizes(local_work_size);
  // Pipelined: no round trip. A launch that fails reports at the next synchronizing call and
  // through its event.
  return send_command(launching, queue, event);
}

// A marker or a barrier: a command with nothing but its wait list and event.
cl_int enqueue_wait_point(opcode op, cl_command_queue queue, cl_uint num_events,
                          const cl_event* wait_list, cl_event* event) {
  request command(op);
  if (cl_int status = put_command(command, queue, num_events, wait_list, event);
      status != CL_SUCCESS) {
    return status;
  }
  // Over only once every command before it is (conservative for a marker with a wait list on
  // an out-of-order queue: settling waits for more reads than it has to, never fewer).
  if (event != nullptr) (*event)->settles_from = 0;
  return send_command(command, queue, event);
}

cl_int queue_request(opcode op, cl_command_queue queue) {
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  request asking(op);
  asking.object(queue);
  reply answer;
  cl_int status = asking.call(*queue->server, answer, CL_OUT_OF_RESOURCES);
  status = asking.with_deferred(*queue->server, status);
  if (op == opcode::finish && status == CL_SUCCESS) return settle_queue(queue);
  return status;
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(
    cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t* global_work_offset,
    const size_t* global_work_size, const size_t* local_work_size, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event) {
  return launch(queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size,
                num_events_in_wait_list, event_wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueTask(cl_command_queue queue, cl_kernel kernel,
                                              cl_uint num_events_in_wait_list,
                                              const cl_event* event_wait_list, cl_event* event) {
  const size_t one = 1;
  return launch(queue, kernel, 1, nullptr, &one, &one, num_events_in_wait_list, event_wait_list,
                event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNativeKernel(cl_command_queue queue,
                                                      void(CL_CALLBACK*)(void*), void*, size_t,
                                                      cl_uint, const cl_mem*, const void**, cl_uint,
                                                      const cl_event*, cl_event*) {
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  // A host function cannot run on another host; the devices do not claim CL_EXEC_NATIVE_KERNEL.
  return CL_INVALID_OPERATION;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue queue,
                                                            cl_uint num_events_in_wait_list,
                                                            const cl_event* event_wait_list,
                                                            cl_event* event) {
  return enqueue_wait_point(opcode::marker, queue, num_events_in_wait_list, event_wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue queue,
                                                             cl_uint num_events_in_wait_list,
                                                             const cl_event* event_wait_list,
                                                             cl_event* event) {
  return enqueue_wait_point(opcode::barrier, queue, num_events_in_wait_list, event_wait_list,
                            event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueMarker(cl_command_queue queue, cl_event* event) {
  if (event == nullptr) return CL_INVALID_VALUE;
  return clEnqueueMarkerWithWaitList(queue, 0, nullptr, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueBarrier(cl_command_queue queue) {
  return clEnqueueBarrierWithWaitList(queue, 0, nullptr, nullptr);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWaitForEvents(cl_command_queue queue, cl_uint num_events,
                                                       const cl_event* event_list) {
  if (num_events == 0 || event_list == nullptr) return CL_INVALID_VALUE;
  return clEnqueueBarrierWithWaitList(queue, num_events, event_list, nullptr);
}

CL_API_ENTRY cl_int CL_API_CALL clFlush(cl_command_queue queue) {
  return queue_request(opcode::flush, queue);
}

CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue queue) {
  return queue_request(opcode::finish, queue);
}

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint num_events, const cl_event* event_list) {
  if (num_events == 0 || event_list == nullptr) return CL_INVALID_VALUE;
  // One wait per server, in the order the servers first appear.
  std::vector<std::pair<server_connection*, std::vector<cl_event>>> by_server;
  for (cl_uint i = 0; i < num_events; ++i) {
    if (!valid(event_list[i], object_kind::event)) return CL_INVALID_EVENT;
    auto found = std::find_if(by_server.begin(), by_server.end(),
                              [&](auto& entry) { return entry.first == event_list[i]->server; });
    if (found == by_server.end()) {
      by_server.push_back({event_list[i]->server, {}});
      found = by_server.end() - 1;
    }
    found->second.push_back(event_list[i]);
  }
  cl_int result = CL_SUCCESS;
  for (auto& [server, events] : by_server) {
    request waiting(opcode::wait_for_events);
    waiting.objects(events.data(), events.size());
    reply answer;
    cl_int status = waiting.call(*server, answer, CL_OUT_OF_RESOURCES);
    for (cl_event waited : events) {
      if (status == CL_SUCCESS) status = settle_event(waited);
    }
    if (status != CL_SUCCESS && result == CL_SUCCESS) result = status;
  }
  return result;
}

CL_API_ENTRY cl_event CL_API_CALL clCreateUserEvent(cl_context context, cl_int* errcode_ret) {
  if (!valid(context, object_kind::context)) return fail(errcode_ret, CL_INVALID_CONTEXT);
  std::uint64_t id = context->server->new_id();
  request creating(opcode::create_user_event);
  creating.fields.put<std::uint64_t>(id);
  creating.object(context);
  reply answer;
  if (cl_int status = creating.call(*context->server, answer); status != CL_SUCCESS) {
    return fail(errcode_ret, status);
  }
  auto* event = new _cl_event(object_kind::event, context->server, id);
  event->context = context;
  hold_parent(event, context);
  context->server->register_object(event);
  succeed(errcode_ret);
  return event;
}

CL_API_ENTRY cl_int CL_API_CALL clSetUserEventStatus(cl_event event, cl_int execution_status) {
  if (!valid(event, object_kind::event) || event->queue != nullptr) return CL_INVALID_EVENT;
  if (execution_status > 0) return CL_INVALID_VALUE;
  request setting(opcode::set_user_event_status);
  setting.object(event);
  setting.fields.put<std::int32_t>(execution_status);
  // Waits for the reply: a second status for the same event must fail here, as OpenCL says.
  reply answer;
  return setting.call(*event->server, answer);
}

CL_API_ENTRY cl_int CL_API_CALL clRetainEvent(cl_event event) {
  if (!valid(event, object_kind::event)) return CL_INVALID_EVENT;
  ++event->references;
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseEvent(cl_event event) {
  if (!valid(event, object_kind::event)) return CL_INVALID_EVENT;
  release_object(event);
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventInfo(cl_event event, cl_event_info param_name,
                                               size_t param_value_size, void* param_value,
                                               size_t* param_value_size_ret) {
  if (!valid(event, object_kind::event)) return CL_INVALID_EVENT;
  switch (param_name) {
    case CL_EVENT_COMMAND_QUEUE:
      return copy_value_info(event->queue, param_value_size, param_value, param_value_size_ret);
    case CL_EVENT_CONTEXT:
      return copy_value_info(event->context, param_value_size, param_value, param_value_size_ret);
    case CL_EVENT_REFERENCE_COUNT: {
      auto count = static_cast<cl_uint>(event->references.load());
      return copy_value_info(count, param_value_size, param_value, param_value_size_ret);
    }
    case CL_EVENT_COMMAND_EXECUTION_STATUS: {
      std::vector<std::byte> value;
      if (cl_int status = fetch_info(info_query::event, event, param_name, 0, value);
          status != CL_SUCCESS) {
        return status;
      }
      cl_int execution = CL_QUEUED;
      if (value.size() != sizeof execution) return CL_OUT_OF_RESOURCES;
      std::memcpy(&execution, value.data(), sizeof execution);
      // Complete means the bytes of a read are in place: put them there first.
      if (execution == CL_COMPLETE) {
        if (cl_int status = settle_event(event); status != CL_SUCCESS) execution = status;
      }
      return copy_value_info(execution, param_value_size, param_value, param_value_size_ret);
    }
    default:
      return forward_info(info_query::event, event, param_name, 0, param_value_size, param_value,
                          param_value_size_ret);
  }
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventProfilingInfo(cl_event event,
                                                        cl_profiling_info param_name,
                                                        size_t param_value_size, void* param_value,
                                                        size_t* param_value_size_ret) {
  if (!valid(event, object_kind::event)) return CL_INVALID_EVENT;
  return forward_info(info_query::event_profiling, event, param_name, 0, param_value_size,
                      param_value, param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL
clSetEventCallback(cl_event event, cl_int command_exec_callback_type,
                   void(CL_CALLBACK* pfn_notify)(cl_event, cl_int, void*), void* user_data) {
  if (!valid(event, object_kind::event)) return CL_INVALID_EVENT;
  if (pfn_notify == nullptr ||
      (command_exec_callback_type != CL_COMPLETE && command_exec_callback_type != CL_SUBMITTED &&
       command_exec_callback_type != CL_RUNNING)) {
    return CL_INVALID_VALUE;
  }
  // The event stays alive until its callback ran.
  ++event->references;
  std::uint64_t callback = event->server->add_callback([=](cl_int status) {
    if (status == CL_COMPLETE) {
      cl_int settled = settle_event(event);  // a read's bytes before its callback
      if (settled != CL_SUCCESS) status = settled;
    }
    pfn_notify(event, status, user_data);
    release_object(event);
  });
  request registering(opcode::set_event_callback);
  registering.object(event);
  registering.fields.put<std::int32_t>(command_exec_callback_type).put<std::uint64_t>(callback);
  return registering.send(*event->server);
}

}  // extern "C"
