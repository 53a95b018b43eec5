#include "device/opencl/opencl_memory.hpp"

#include <optional>
#include <string>

namespace troupe::detail {

namespace {

/// Failures that releasing kept buffers may cure. Wider than opencl_error_kind's
/// out_of_device_memory: an implementation may report a full device as CL_OUT_OF_RESOURCES,
/// which is not reported as out of memory because it also means a launch that asks too much.
bool out_of_memory(cl_int status) noexcept {
  return status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_RESOURCES ||
         status == CL_OUT_OF_HOST_MEMORY;
}

}  // namespace

opencl_memory_cache::opencl_memory_cache(context_ptr context, std::size_t limit,
                                         std::size_t largest)
    : context_(std::move(context)), largest_(largest), kept_(limit, limit / 4) {}

opencl_memory_cache::~opencl_memory_cache() {
  release_all();
}

cl_mem opencl_memory_cache::allocate(std::size_t bytes) {
  if (bytes > largest_)
    throw error(errc::out_of_device_memory,
                "allocating " + std::to_string(bytes) + " bytes on device '" + context_->name +
                    "': more than its largest allocation, " + std::to_string(largest_) + " bytes");
  if (const std::optional<cl_mem> kept = kept_.take(bytes)) return *kept;
  cl_int status = CL_SUCCESS;
  cl_mem buffer = clCreateBuffer(context_->context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
  if (out_of_memory(status)) {
    release_all();
    buffer = clCreateBuffer(context_->context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
  }
  check_opencl(status, "clCreateBuffer", context_->name);
  return buffer;
}

void opencl_memory_cache::give_back(cl_mem buffer, std::size_t bytes) noexcept {
  kept_.keep(bytes, buffer, clReleaseMemObject);
}

void opencl_memory_cache::release_all() noexcept {
  kept_.release_all(clReleaseMemObject);
}

void opencl_memory_cache::check_enqueue(cl_int status, const char* call) {
  if (status == CL_SUCCESS) return;
  if (out_of_memory(status)) release_all();
  check_opencl(status, call, context_->name);
}

opencl_memory::opencl_memory(std::shared_ptr<opencl_memory_cache> cache, std::size_t size)
    : cache_(std::move(cache)) {
  bytes = size;
  mem = cache_->allocate(size);
}

opencl_memory::~opencl_memory() {
  cache_->give_back(mem, bytes);
}

}  // namespace troupe::detail
