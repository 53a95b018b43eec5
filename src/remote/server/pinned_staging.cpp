#include "remote/server/pinned_staging.hpp"

#include <cstring>
#include <utility>
#include <vector>

namespace troupe::remote::server {

/// One context's pinned buffers: made on demand (up to a bound), mapped once for good, lent to
/// one transfer at a time. Its own queue maps them, so that mapping never waits behind a client's
/// commands.
class context_staging {
 public:
  context_staging(cl_context context, cl_command_queue queue, std::size_t most_buffers)
      : context_(context), queue_(queue), most_buffers_(most_buffers) {}
  context_staging(const context_staging&) = delete;
  context_staging& operator=(const context_staging&) = delete;
  ~context_staging() {
    release(idle_);
    clReleaseCommandQueue(queue_);
    clReleaseContext(context_);
  }

  /// No more transfers come (its context was released, or its session closed): the idle buffers
  /// go now, and each lent one as it comes back, with what they take from the quota.
  void retire() {
    {
      std::lock_guard lock(mutex_);
      retired_ = true;
    }
    release_idle();
  }

  staging_lease take(const std::shared_ptr<context_staging>& self, std::size_t size,
                     session_quota& quota) {
    {
      std::lock_guard lock(mutex_);
      if (retired_ || refused_) return {};
      if (!idle_.empty()) {
        buffer lent = std::move(idle_.back());
        idle_.pop_back();
        return {self, lent.mem, lent.host, size, std::move(lent.charge)};
      }
      if (made_ >= most_buffers_) return {};
      ++made_;  // taken now; making it (a blocking map, zeroing) happens outside the lock
    }
    auto charge = quota.try_take(quota_resource::host_memory, pinned_staging::staging_buffer_size);
    buffer made = charge ? make() : buffer{};
    if (made.host == nullptr) {
      std::lock_guard lock(mutex_);
      --made_;
      refused_ = charge.has_value();  // the platform gives no pinned memory: stop asking
      return {};
    }
    return {self, made.mem, made.host, size, std::move(*charge)};
  }

  void release_idle() {
    std::vector<buffer> idle;
    {
      std::lock_guard lock(mutex_);
      idle.swap(idle_);
      made_ -= idle.size();
    }
    release(idle);
  }

  void give_back(cl_mem mem, std::byte* host, session_quota::charge charge) {
    std::vector<buffer> returned;
    returned.push_back({mem, host, std::move(charge)});
    {
      std::lock_guard lock(mutex_);
      if (!retired_) {
        idle_.push_back(std::move(returned.back()));
        return;
      }
      --made_;
    }
    release(returned);
  }

 private:
  struct buffer {
    cl_mem mem = nullptr;
    std::byte* host = nullptr;
    session_quota::charge charge;
  };

  // Unmaps and releases `buffers` (outside the lock: unmapping waits for the device).
  void release(std::vector<buffer>& buffers) const {
    if (buffers.empty()) return;
    for (auto& gone : buffers) {
      clEnqueueUnmapMemObject(queue_, gone.mem, gone.host, 0, nullptr, nullptr);
    }
    clFinish(queue_);
    for (auto& gone : buffers) clReleaseMemObject(gone.mem);
    buffers.clear();  // the charges go with them
  }

  // A new pinned buffer, mapped and zeroed; an empty one when the platform refuses.
  buffer make() const {
    cl_int status = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(context_, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE,
                                pinned_staging::staging_buffer_size, nullptr, &status);
    if (status != CL_SUCCESS) return {};
    void* host =
        clEnqueueMapBuffer(queue_, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                           pinned_staging::staging_buffer_size, 0, nullptr, nullptr, &status);
    if (status != CL_SUCCESS || host == nullptr) {
      clReleaseMemObject(mem);
      return {};
    }
    std::memset(host, 0, pinned_staging::staging_buffer_size);
    return {mem, static_cast<std::byte*>(host), {}};
  }

  cl_context context_;
  cl_command_queue queue_;
  const std::size_t most_buffers_;
  std::mutex mutex_;  // guards what follows
  std::vector<buffer> idle_;
  std::size_t made_ = 0;  // buffers that exist, idle or lent
  bool retired_ = false;  // see retire()
  bool refused_ = false;  // making one failed: the platform gives no pinned memory
};

staging_lease::staging_lease(std::shared_ptr<context_staging> pool, cl_mem buffer, std::byte* host,
                             std::size_t size, session_quota::charge charge)
    : pool_(std::move(pool)),
      buffer_(buffer),
      host_(host),
      size_(size),
      charge_(std::move(charge)) {}

staging_lease::staging_lease(staging_lease&& other) noexcept
    : pool_(std::move(other.pool_)),
      buffer_(std::exchange(other.buffer_, nullptr)),
      host_(std::exchange(other.host_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      charge_(std::move(other.charge_)) {}

staging_lease& staging_lease::operator=(staging_lease&& other) noexcept {
  if (this != &other) {
    give_back();
    pool_ = std::move(other.pool_);
    buffer_ = std::exchange(other.buffer_, nullptr);
    host_ = std::exchange(other.host_, nullptr);
    size_ = std::exchange(other.size_, 0);
    charge_ = std::move(other.charge_);
  }
  return *this;
}

staging_lease::~staging_lease() {
  give_back();
}

void staging_lease::give_back() {
  if (pool_ == nullptr || host_ == nullptr) return;
  pool_->give_back(buffer_, host_, std::move(charge_));
  pool_.reset();
  host_ = nullptr;
  buffer_ = nullptr;
  size_ = 0;
}

staging_lease pinned_staging::lend(cl_command_queue queue, std::size_t size) {
  if (buffers_per_context_ == 0 || size < least_staged || size > staging_buffer_size) return {};
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  if (clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr) !=
          CL_SUCCESS ||
      clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr) !=
          CL_SUCCESS) {
    return {};
  }
  std::shared_ptr<context_staging> pool;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return {};
    auto& found = pools_[context];
    if (found == nullptr) {
      cl_int status = CL_SUCCESS;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      cl_command_queue own = clCreateCommandQueue(context, device, 0, &status);
#pragma GCC diagnostic pop
      if (status != CL_SUCCESS) {
        pools_.erase(context);
        return {};
      }
      clRetainContext(context);  // the pool's, while it lives
      found = std::make_shared<context_staging>(context, own, buffers_per_context_);
    }
    pool = found;
  }
  return pool->take(pool, size, quota_);
}

void pinned_staging::release_idle() {
  std::vector<std::shared_ptr<context_staging>> pools;
  {
    std::lock_guard lock(mutex_);
    for (auto& [context, pool] : pools_) pools.push_back(pool);
  }
  for (auto& pool : pools) pool->release_idle();
}

void pinned_staging::forget(cl_context context) {
  std::shared_ptr<context_staging> dropped;  // released outside the lock
  {
    std::lock_guard lock(mutex_);
    auto found = pools_.find(context);
    if (found == pools_.end()) return;
    dropped = std::move(found->second);
    pools_.erase(found);
  }
  dropped->retire();
}

void pinned_staging::clear() {
  std::unordered_map<cl_context, std::shared_ptr<context_staging>> dropped;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    dropped.swap(pools_);
  }
  for (auto& [context, pool] : dropped) pool->retire();
}

}  // namespace troupe::remote::server
