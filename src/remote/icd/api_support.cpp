#include "remote/icd/api_support.hpp"

#include <cctype>

namespace troupe::remote::icd {

cl_int fetch_info(info_query query, const remote_object* subject, cl_uint param,
                  std::uint64_t extra, std::vector<std::byte>& value) {
  request asking(opcode::get_info);
  asking.fields.put<std::uint8_t>(static_cast<std::uint8_t>(query)).put<std::uint32_t>(param);
  asking.object(subject);
  asking.fields.put<std::uint64_t>(extra);
  reply answer;
  if (cl_int status = asking.call(*subject->server, answer); status != CL_SUCCESS) return status;
  reader fields = answer.fields();
  try {
    auto form = fields.get<std::uint8_t>();
    if (form == 0) {
      auto bytes = fields.get_bytes();
      value.assign(bytes.begin(), bytes.end());
      return CL_SUCCESS;
    }
    auto kind = static_cast<object_kind>(fields.get<std::uint8_t>());
    if (form != 1 || kind != info_handle_kind(query, param)) {
      throw decode_error("info reply of an unexpected form");
    }
    auto ids = fields.get_array<std::uint64_t>();
    value.resize(ids.size() * sizeof(void*));
    for (std::size_t i = 0; i < ids.size(); ++i) {
      remote_object* object = subject->server->object_for(kind, ids[i]);
      if (kind == object_kind::device && object != nullptr) {
        auto* device = static_cast<_cl_device_id*>(object);
        if (device->platform == nullptr && subject->kind == object_kind::device) {
          device->platform = static_cast<const _cl_device_id*>(subject)->platform;
        }
      }
      std::memcpy(value.data() + i * sizeof(void*), &object, sizeof(void*));
    }
    return CL_SUCCESS;
  } catch (const decode_error& error) {
    subject->server->mark_lost(error.what());
    return CL_OUT_OF_RESOURCES;
  }
}

cl_int forward_info(info_query query, const remote_object* subject, cl_uint param,
                    std::uint64_t extra, std::size_t param_value_size, void* param_value,
                    std::size_t* param_value_size_ret) {
  std::vector<std::byte> value;
  if (cl_int status = fetch_info(query, subject, param, extra, value); status != CL_SUCCESS) {
    return status;
  }
  return copy_info(value.data(), value.size(), param_value_size, param_value, param_value_size_ret);
}

cl_int put_command(request& command, cl_command_queue queue, cl_uint num_events,
                   const cl_event* wait_list, cl_event* event) {
  if (!valid(queue, object_kind::queue)) return CL_INVALID_COMMAND_QUEUE;
  if ((num_events == 0) != (wait_list == nullptr)) return CL_INVALID_EVENT_WAIT_LIST;
  std::vector<cl_event> same_server;
  for (cl_uint i = 0; i < num_events; ++i) {
    cl_event waited = wait_list[i];
    if (!valid(waited, object_kind::event)) return CL_INVALID_EVENT_WAIT_LIST;
    if (waited->server == queue->server) {
      same_server.push_back(waited);
    } else {
      // An event of another server cannot be named on this one: wait for it here, on the host.
      if (cl_int status = clWaitForEvents(1, &waited); status != CL_SUCCESS) {
        return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
      }
    }
  }
  command.object(queue);
  command.objects(same_server.data(), same_server.size());
  command.issue = queue->server->next_issue();
  if (event != nullptr) {
    auto* created = new _cl_event(object_kind::event, queue->server, queue->server->new_id());
    created->queue = queue;
    created->context = queue->context;
    created->issue = command.issue;
    created->settles_from = queue->in_order ? 0 : command.issue;
    hold_parent(created, queue);
    queue->server->register_object(created);
    // Named, not just numbered: a frame of another thread's connection that uses the event
    // is then fenced behind this one, which creates it on the server.
    command.object(created);
    *event = created;
  } else {
    command.fields.put<std::uint64_t>(0);
  }
  return CL_SUCCESS;
}

namespace {

void drop_event(cl_event* event) {
  if (event != nullptr && *event != nullptr) {
    release_object(*event);
    *event = nullptr;
  }
}

// A command that names an object of another server than its queue's (OpenCL: of another
// context) is refused unsent: its ids would name other objects there. Its event never reached
// the server either, so it goes without a release frame.
cl_int refuse_mixed(cl_event* event) {
  if (event != nullptr && *event != nullptr) {
    release_object(*event, false);
    *event = nullptr;
  }
  return CL_INVALID_CONTEXT;
}

}  // namespace

cl_int send_command(request& command, cl_command_queue queue, cl_event* event) {
  if (!command.names_only(*queue->server)) return refuse_mixed(event);
  cl_int status = command.send(*queue->server, CL_OUT_OF_RESOURCES);
  if (status != CL_SUCCESS) drop_event(event);
  return status;
}

cl_int call_command(request& command, cl_command_queue queue, cl_event* event, void* bulk,
                    std::size_t bulk_size) {
  if (!command.names_only(*queue->server)) return refuse_mixed(event);
  reply answer;
  cl_int status = command.call_into(*queue->server, answer, bulk, bulk_size, CL_OUT_OF_RESOURCES);
  status = command.with_deferred(*queue->server, status);
  if (status != CL_SUCCESS) {
    drop_event(event);
    return status;
  }
  // On an in-order queue everything before a completed command is over, reads included.
  if (queue->in_order) {
    return queue->server->settle_reads([&](const pending_read& read) {
      return read.queue == queue && read.issue < command.issue;
    });
  }
  return CL_SUCCESS;
}

cl_int send_read(request& command, cl_command_queue queue, cl_event* event, pending_read landing) {
  if (!command.names_only(*queue->server)) return refuse_mixed(event);
  landing.queue = queue;
  landing.issue = command.issue;
  cl_int status = command.send_read(*queue->server, std::move(landing), CL_OUT_OF_RESOURCES);
  if (status != CL_SUCCESS) drop_event(event);
  return status;
}

cl_int transfer_on_own_queue(cl_mem buffer, bool write, std::size_t offset, std::size_t size,
                             void* host) {
  std::size_t bytes = 0;
  cl_int status = clGetContextInfo(buffer->context, CL_CONTEXT_DEVICES, 0, nullptr, &bytes);
  if (status != CL_SUCCESS) return status;
  std::vector<cl_device_id> devices(bytes / sizeof(cl_device_id));
  if (devices.empty()) return CL_INVALID_CONTEXT;
  status = clGetContextInfo(buffer->context, CL_CONTEXT_DEVICES, bytes, devices.data(), nullptr);
  if (status != CL_SUCCESS) return status;
  cl_command_queue own = clCreateCommandQueue(buffer->context, devices[0], 0, &status);
  if (status != CL_SUCCESS) return status;
  status = write
               ? clEnqueueWriteBuffer(own, buffer, CL_TRUE, offset, size, host, 0, nullptr, nullptr)
               : clEnqueueReadBuffer(own, buffer, CL_TRUE, offset, size, host, 0, nullptr, nullptr);
  clReleaseCommandQueue(own);
  return status;
}

cl_int settle_queue(cl_command_queue queue) {
  return queue->server->settle_reads([&](const pending_read& read) { return read.queue == queue; });
}

cl_int settle_event(cl_event event) {
  if (event->queue == nullptr) return CL_SUCCESS;  // a user event
  return event->server->settle_reads([&](const pending_read& read) {
    return read.queue == event->queue && read.issue >= event->settles_from &&
           read.issue <= event->issue;
  });
}

cl_int settle_overlap(server_connection& server, const void* host, std::size_t size) {
  const auto* begin = static_cast<const std::byte*>(host);
  const auto* end = begin + size;
  return server.settle_reads(
      [&](const pending_read& read) { return read.covers_begin < end && begin < read.covers_end; });
}

std::string cap_version(const std::string& version, const char* prefix) {
  std::size_t start = std::strlen(prefix);
  if (version.compare(0, start, prefix) != 0) return version;
  std::size_t end = start;
  while (end < version.size() &&
         (std::isdigit(static_cast<unsigned char>(version[end])) || version[end] == '.')) {
    ++end;
  }
  std::string number = version.substr(start, end - start);
  int major = 0, minor = 0;
  if (std::sscanf(number.c_str(), "%d.%d", &major, &minor) == 2 &&
      (major > 1 || (major == 1 && minor > 2))) {
    return std::string(prefix) + "1.2" + version.substr(end);
  }
  return version;
}

}  // namespace troupe::remote::icd
