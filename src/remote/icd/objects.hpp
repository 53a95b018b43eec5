// The ICD's OpenCL objects. The ICD loader requires each to start with a pointer to the
// dispatch table; the rest says which server holds the real object and under which id.
#pragma once

#include <CL/cl_icd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "remote/protocol/opcode.hpp"

namespace troupe::remote::icd {

class server_connection;
struct connection;

/// The dispatch table every object of this driver points to (filled in dispatch.cpp).
extern cl_icd_dispatch dispatch_table;

/// What every object of this driver starts with.
struct remote_object {
  remote_object(object_kind kind, server_connection* server, std::uint64_t id);
  // Not virtual: a vtable pointer would displace the dispatch pointer from the first word.
  // destroy_object() deletes through the right type.
  ~remote_object();
  remote_object(const remote_object&) = delete;
  remote_object& operator=(const remote_object&) = delete;

  cl_icd_dispatch* dispatch = &dispatch_table;  // must stay the first word
  const object_kind kind;
  server_connection* const server;
  const std::uint64_t id;
  /// The application's references plus the driver's own holds (pending callbacks).
  std::atomic<std::int64_t> references{1};
  /// The last pipelined frame that named this object, as (connection index << 32 | sequence),
  /// 0 for none. A frame on another connection that names the object is fenced behind it:
  /// frames of different connections are not ordered on the server.
  std::atomic<std::uint64_t> last_frame{0};
  /// What this object was made from (a context; a kernel's program; a command event's queue),
  /// held by one reference of this object's: OpenCL lets the application release that first
  /// and still use or query this object. Released when this object goes.
  remote_object* parent = nullptr;
};

/// True when `pointer` is a live object of this driver (kernel arguments are told apart so).
bool is_live_object(const void* pointer);

/// Deletes an object through its most-derived type.
void destroy_object(remote_object* object);

/// Drops one reference; the last one tells the server (unless `on_server` is false: it never
/// got there) and frees the object (and drops its hold on its parent).
void release_object(remote_object* object, bool on_server = true);

/// Makes `parent` the parent of a new `child`, taking one reference to it.
void hold_parent(remote_object* child, remote_object* parent);

}  // namespace troupe::remote::icd

struct _cl_platform_id : troupe::remote::icd::remote_object {
  using remote_object::remote_object;
  /// The server's platform name; with " (troupe @ host:port)" if TROUPE_ICD_PLATFORM_SUFFIX=1.
  std::string name;
  /// The server's that the driver forwards, with cl_khr_icd and cl_troupe_remote.
  std::string extensions;
};

struct _cl_device_id : troupe::remote::icd::remote_object {
  using remote_object::remote_object;
  cl_platform_id platform = nullptr;
  bool root = true;  ///< root devices are never freed; sub-devices are reference counted
};

struct _cl_context : troupe::remote::icd::remote_object {
  using remote_object::remote_object;
  std::vector<cl_context_properties> properties;  ///< as the application gave them
};

struct _cl_command_queue : troupe::remote::icd::remote_object {
  using remote_object::remote_object;
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  bool in_order = true;  ///< without CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE
};

struct _cl_mem : troupe::remote::icd::remote_object {
  using remote_object::remote_object;
  struct mapping {
    std::size_t offset = 0;
    std::size_t size = 0;
    cl_map_flags flags = 0;
    bool owned = false;                 ///< memory the driver allocated (not the host pointer)
    std::size_t origin[3] = {0, 0, 0};  ///< images: the mapped region
    std::size_t region[3] = {0, 0, 0};
    std::size_t row_pitch = 0, slice_pitch = 0;
  };
  cl_context context = nullptr;
  cl_mem_flags flags = 0;  ///< as the application gave them
  void* host_pointer = nullptr;
  std::size_t size = 0;
  cl_mem_object_type type = CL_MEM_OBJECT_BUFFER;
  std::size_t element_size = 0;                  ///< images
  cl_image_format format{0, 0};                  ///< images
  std::size_t width = 0, height = 1, depth = 1;  ///< images; arrays count layers in depth
  std::mutex mutex;
  /// By mapped address; maps of one region of a host pointer share theirs, one entry each.
  std::unordered_multimap<void*, mapping> mappings;
  struct destructor_callback {
    void(CL_CALLBACK* function)(cl_mem, void*);
    void* user_data;
  };
  std::vector<destructor_callback> destructor_callbacks;
};

struct _cl_sampler : troupe::remote::icd::remote_object {
  using remote_object::remote_object;
  cl_context context = nullptr;
};

struct _cl_program : troupe::remote::icd::remote_object {
  using remote_object::remote_object;
  cl_context context = nullptr;
  std::string source;  ///< of a program made from source: where its -I includes are found
};

struct _cl_kernel : troupe::remote::icd::remote_object {
  using remote_object::remote_object;
  cl_program program = nullptr;
};

struct _cl_event : troupe::remote::icd::remote_object {
  using remote_object::remote_object;
  cl_command_queue queue = nullptr;  ///< null for user events
  cl_context context = nullptr;
  /// Its command's place in the order of issue, and the first place on its queue whose reads
  /// are over once it is: 0 on an in-order queue and for markers and barriers, else its own
  /// (or the first piece's, for a read cut into pieces). See settle_event().
  std::uint64_t issue = 0;
  std::uint64_t settles_from = 0;
};
