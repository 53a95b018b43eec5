#pragma once

// One OpenCL device as a backend_device: its context, memory, queues and programs.

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "device/backend.hpp"
#include "device/opencl/opencl_context.hpp"
#include "device/opencl/opencl_memory.hpp"
#include "device/opencl/opencl_pinned_allocator.hpp"

namespace troupe::detail {

/// One OpenCL device, with its context: its memory, queues and programs.
class opencl_device final : public backend_device {
 public:
  /// `stage_cpu_copies`: a CPU device's pageable copies go through pinned blocks too.
  /// `one_launching_thread`: its queues prefer one launching thread. `blocking_reads`: its
  /// driver may block in reads (opencl_queue::may_block_in).
  opencl_device(cl_platform_id platform, cl_device_id id, bool stage_cpu_copies,
                bool one_launching_thread, bool blocking_reads);

  std::unique_ptr<backend_memory> allocate(std::size_t bytes) override;
  std::unique_ptr<backend_host_memory> allocate_host(std::size_t bytes) override;
  std::unique_ptr<backend_queue> make_queue() override;
  std::unique_ptr<backend_program> build(const std::string& source,
                                         const std::string& options) override;
  std::unique_ptr<backend_program> load(std::span<const std::byte> blob) override;

  std::string cache_identity() const override { return identity_; }
  const void* domain() const noexcept override { return context_->context; }
  const device_waits& waits() const noexcept override { return context_->waits; }

 private:
  std::string build_log(cl_program p) const;
  std::map<std::string, std::vector<kernel_param>> kernel_params(cl_program p) const;

  /// The pinned blocks that a GPU's pageable copies go through, made with its first queue; none
  /// for a CPU device, whose device memory is host memory already, unless asked for.
  std::shared_ptr<opencl_staging> staging();

  context_ptr context_;
  bool stage_cpu_copies_;
  bool one_launching_thread_;
  bool blocking_reads_;
  std::shared_ptr<opencl_memory_cache> memory_;
  std::string identity_;
  std::mutex staging_mutex_;
  std::shared_ptr<opencl_staging> staging_;
};

}  // namespace troupe::detail
