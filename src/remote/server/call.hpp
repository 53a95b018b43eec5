// What a request handler works with: the session, the decoded request, the reply being built.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "remote/protocol/wire.hpp"
#include "remote/server/session.hpp"

namespace troupe::remote::server {

/// One request being served.
struct call {
  session& owner;
  /// The index of the request connection it came on (see session::add_connection).
  std::uint32_t connection;
  reader in;
  writer out;
  /// The request's payload buffer: a handler may take it over to keep bulk bytes alive.
  std::vector<std::byte>& payload;
  /// Bulk reply bytes, sent after `out` (their length is already in `out`).
  host_bytes reply_data;
  /// What `reply_data` takes from the session's host memory quota.
  session_quota::charge reply_charge;
  /// References to every object the request names, so none goes away while it is served.
  std::vector<object_ref> held;
  /// The request may be answered once its command completes (flag_reply_on_completion): a
  /// read that does so enqueues without waiting and leaves its event here (one reference).
  bool reply_on_completion = false;
  cl_event completion = nullptr;

  /// The handle named by the next id in the request.
  template <class Handle>
  Handle object(object_kind kind, cl_int invalid) {
    return object_by_id<Handle>(in.get<std::uint64_t>(), kind, invalid);
  }
  template <class Handle>
  Handle object_by_id(std::uint64_t id, object_kind kind, cl_int invalid) {
    held.push_back(owner.find(id, kind, invalid));
    return held.back()->as<Handle>();
  }
  /// An array of ids turned into handles (an empty array gives an empty vector).
  template <class Handle>
  std::vector<Handle> objects(object_kind kind, cl_int invalid, std::size_t max_count = 1 << 16) {
    std::vector<Handle> handles;
    for (auto id : in.get_array<std::uint64_t>(max_count)) {
      handles.push_back(object_by_id<Handle>(id, kind, invalid));
    }
    return handles;
  }
  /// An array of device ids turned into handles.
  std::vector<cl_device_id> devices() {
    return objects<cl_device_id>(object_kind::device, CL_INVALID_DEVICE);
  }

  /// Registers an object the server created with a server-range id; the session's table takes
  /// over the reference that creation returned.
  std::uint64_t adopt(object_kind kind, void* handle) {
    std::uint64_t id = 0;
    try {
      id = owner.id_for(kind, handle);  // takes a reference of its own
    } catch (...) {
      release_created(kind, handle);  // the quota refused it: it goes all the same
      throw;
    }
    release_created(kind, handle);
    return id;
  }
  /// Adopts every one of `handles`, or, when one is refused, none.
  template <class Handle>
  std::vector<std::uint64_t> adopt_all(object_kind kind, const std::vector<Handle>& handles) {
    std::vector<std::uint64_t> ids;
    std::size_t next = 0;
    try {
      for (; next < handles.size(); ++next) ids.push_back(adopt(kind, handles[next]));
    } catch (...) {
      for (++next; next < handles.size(); ++next) release_created(kind, handles[next]);
      for (auto id : ids) owner.release(id);
      throw;
    }
    return ids;
  }

 private:
  // Creation returns a reference to devices and kernels; the table takes one of its own.
  static void release_created(object_kind kind, void* handle) {
    if (kind == object_kind::device) clReleaseDevice(static_cast<cl_device_id>(handle));
    if (kind == object_kind::kernel) clReleaseKernel(static_cast<cl_kernel>(handle));
  }
};

/// Throws cl_failure when an OpenCL call failed, naming the call.
inline void check(cl_int status, const char* what) {
  if (status != CL_SUCCESS) throw cl_failure{status, what};
}

}  // namespace troupe::remote::server
