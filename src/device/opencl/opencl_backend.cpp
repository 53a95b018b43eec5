// The OpenCL backend, through the ICD loader: one context and any number of in-order queues per
// device. Commands are flushed as they are enqueued, so polling sees progress. A GPU's copies
// from and to pageable memory go through pinned blocks (opencl_staging.hpp), in chunks, so that
// the host's copy of one chunk overlaps the device's of the next. Freed device memory is kept
// for reuse (opencl_memory.hpp).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "device/backend.hpp"
#include "device/opencl/opencl_errors.hpp"
#include "device/opencl/opencl_memory.hpp"
#include "device/opencl/opencl_staging.hpp"
#include "troupe/support/stage_trace.hpp"

namespace troupe::detail {

namespace {

std::string device_string(cl_device_id id, cl_device_info what) {
  std::size_t size = 0;
  if (clGetDeviceInfo(id, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string value(size, '\0');
  clGetDeviceInfo(id, what, size, value.data(), nullptr);
  value.resize(std::strlen(value.c_str()));
  return value;
}

template <class T>
T device_value(cl_device_id id, cl_device_info what) {
  T value{};
  clGetDeviceInfo(id, what, sizeof value, &value, nullptr);
  return value;
}

std::string platform_string(cl_platform_id id, cl_platform_info what) {
  std::size_t size = 0;
  if (clGetPlatformInfo(id, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string value(size, '\0');
  clGetPlatformInfo(id, what, size, value.data(), nullptr);
  value.resize(std::strlen(value.c_str()));
  return value;
}

/// "OpenCL 3.0 PoCL ..." → 3.0
version parse_version(const std::string& text) {
  version v;
  std::sscanf(text.c_str(), "OpenCL %d.%d", &v.major, &v.minor);
  return v;
}

/// OpenCL spells some types two ways, and CL_KERNEL_ARG_TYPE_NAME may give either: the short
/// spelling, without spaces ("uint*", not "unsigned int *"), which launches compare against.
std::string canonical_type(std::string name) {
  while (!name.empty() && name.back() == ' ') name.pop_back();
  const std::pair<const char*, const char*> spellings[] = {
      {"unsigned char", "uchar"}, {"unsigned short", "ushort"}, {"unsigned int", "uint"},
      {"unsigned long", "ulong"}, {"unsigned", "uint"},         {"signed char", "char"}};
  for (auto [long_name, short_name] : spellings)
    if (name.rfind(long_name, 0) == 0)
      name = short_name + name.substr(std::string{long_name}.size());
  std::erase(name, ' ');
  return name;
}

/// Bytes of a by-value parameter of this OpenCL C type (canonical_type); 0 when not a known
/// scalar or vector.
std::size_t scalar_size(const std::string& type) {
  static const std::pair<const char*, std::size_t> sizes[] = {
      {"char", 1}, {"uchar", 1},  {"short", 2}, {"ushort", 2}, {"int", 4},
      {"uint", 4}, {"long", 8},   {"ulong", 8}, {"float", 4},  {"double", 8},
      {"half", 2}, {"size_t", 0}, {"bool", 0}};
  for (auto [name, size] : sizes) {
    auto n = std::strlen(name);
    if (type.compare(0, n, name) != 0) continue;
    auto rest = type.substr(n);
    if (rest.empty()) return size;
    int lanes = std::atoi(rest.c_str());
    if (lanes == 3) lanes = 4;  // vec3 types take the space of vec4
    if (lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16) return size * std::size_t(lanes);
    return 0;
  }
  return 0;
}

/// The program's binary for its one device.
std::vector<unsigned char> program_binary(cl_program p, const std::string& device) {
  std::size_t size = 0;
  check_opencl(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
               "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)", device);
  std::vector<unsigned char> binary(size);
  unsigned char* data = binary.data();
  check_opencl(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr),
               "clGetProgramInfo(CL_PROGRAM_BINARIES)", device);
  return binary;
}

/// A copy staged through a pinned block: the block, and for a read where its data goes.
struct opencl_staged_copy {
  std::shared_ptr<opencl_staging> pool;
  opencl_staging_block block;
  void* read_destination = nullptr;
  std::size_t read_bytes = 0;
  intrusive_ptr<destination_gate> read_ready{};  // how far read_destination may be written yet
  /// A read of several chunks: the events of all chunks but the last (the command's own), so
  /// that query() copies arrived chunks out while later ones are still in flight.
  std::vector<cl_event> chunk_events{};
  std::size_t chunk_bytes = 0;
  std::size_t chunks_copied = 0;
};

class opencl_event final : public backend_event {
 public:
  opencl_event(cl_event event, context_ptr context, opencl_staged_copy staged = {})
      : event_(event), context_(std::move(context)), staged_(std::move(staged)) {}
  ~opencl_event() override {
    if (staged_.pool) {
      // Dropped before finish(), after an error: the device may still copy through the block.
      clWaitForEvents(1, &event_);
      staged_.pool->give_back(staged_.block);
    }
    for (cl_event chunk : staged_.chunk_events) clReleaseEvent(chunk);
    clReleaseEvent(event_);
  }

  const void* domain() const noexcept override { return context_->context; }
  cl_event handle() const noexcept { return event_; }

  bool query() override {
    if (staged_.chunks_copied < staged_.chunk_events.size()) copy_arrived_chunks();
    return complete(event_);
  }

  /// A staged read's data (what query() has not copied yet) goes to its destination; the block
  /// goes back to its pool.
  void finish() override {
    if (!staged_.pool) return;
    if (staged_.read_destination != nullptr)
      staged_.pool->copy_when_ready(staged_.read_destination, staged_.block.data,
                                    staged_.chunks_copied * staged_.chunk_bytes, staged_.read_bytes,
                                    staged_.read_ready.get());
    staged_.pool->give_back(staged_.block);
    staged_.pool.reset();
  }

  /// Whether `event` has completed; throws troupe::error if its command failed.
  bool complete(cl_event event) const {
    cl_int status = CL_QUEUED;
    check_opencl(
        clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
        "clGetEventInfo", context_->name);
    if (status < 0)  // out of memory too: an implementation may allocate at first use
      throw error(opencl_error_kind(status), "OpenCL command on device '" + context_->name +
                                                 "' failed: " + opencl_error_name(status));
    return status == CL_COMPLETE;
  }

  /// Copies out the chunks of a staged read that have arrived, in order.
  void copy_arrived_chunks() {
    auto& s = staged_;
    for (; s.chunks_copied < s.chunk_events.size(); ++s.chunks_copied) {
      const std::size_t at = s.chunks_copied * s.chunk_bytes;
      // Never waits here: a destination still being prepared is caught up with in finish().
      if (s.read_ready && s.read_ready->ready() < at + s.chunk_bytes) return;
      if (!complete(s.chunk_events[s.chunks_copied])) return;
      stage_trace::record(stage_trace::point::chunk_arrived);
      s.pool->copy(static_cast<std::byte*>(s.read_destination) + at,
                   static_cast<const std::byte*>(s.block.data) + at, s.chunk_bytes);
      stage_trace::record(stage_trace::point::chunk_copied);
    }
  }

  void notify(std::function<void()> done) override {
    auto* heap = new std::function<void()>(std::move(done));
    auto call = [](cl_event, cl_int, void* user) {
      auto* f = static_cast<std::function<void()>*>(user);
      (*f)();
      delete f;
    };
    if (clSetEventCallback(event_, CL_COMPLETE, call, heap) != CL_SUCCESS) {
      // Cannot happen for a valid event; call back at once so the poll pass finds it.
      (*heap)();
      delete heap;
    }
  }

 private:
  cl_event event_;
  context_ptr context_;
  opencl_staged_copy staged_;
};

class opencl_host_memory final : public backend_host_memory {
 public:
  opencl_host_memory(cl_mem mem, cl_command_queue queue, context_ptr context)
      : mem_(mem), queue_(queue), context_(std::move(context)) {}
  ~opencl_host_memory() override {
    cl_event done = nullptr;
    if (clEnqueueUnmapMemObject(queue_, mem_, data, 0, nullptr, &done) == CL_SUCCESS) {
      clWaitForEvents(1, &done);
      clReleaseEvent(done);
    }
    clReleaseCommandQueue(queue_);
    clReleaseMemObject(mem_);
  }

 private:
  cl_mem mem_;
  cl_command_queue queue_;
  context_ptr context_;
};

/// A kernel's cl_kernel objects: one per concurrent launch, so that setting arguments and
/// enqueueing never races and never serialises launches on different queues. One spare sits
/// in an atomic slot, so that launches one at a time take no lock.
class opencl_kernel final : public backend_kernel {
 public:
  opencl_kernel(cl_program program, context_ptr context)
      : program_(program), context_(std::move(context)) {
    clRetainProgram(program_);
  }
  ~opencl_kernel() override {
    if (auto k = spare_.load(std::memory_order_relaxed)) clReleaseKernel(k);
    for (auto k : idle_) clReleaseKernel(k);
    clReleaseProgram(program_);
  }

  cl_kernel take() {
    if (auto k = spare_.exchange(nullptr, std::memory_order_acquire)) return k;
    {
      std::lock_guard guard{mutex_};
      if (!idle_.empty()) {
        auto k = idle_.back();
        idle_.pop_back();
        return k;
      }
    }
    cl_int status = CL_SUCCESS;
    auto k = clCreateKernel(program_, name.c_str(), &status);
    check_opencl(status, "clCreateKernel", context_->name);
    return k;
  }
  void give_back(cl_kernel k) {
    cl_kernel empty = nullptr;
    if (spare_.compare_exchange_strong(empty, k, std::memory_order_release,
                                       std::memory_order_relaxed))
      return;
    std::lock_guard guard{mutex_};
    idle_.push_back(k);
  }

 private:
  cl_program program_;
  context_ptr context_;
  std::atomic<cl_kernel> spare_{nullptr};
  std::mutex mutex_;
  std::vector<cl_kernel> idle_;
};

/// What the disk cache stores for an OpenCL program: the binary plus each kernel's parameters,
/// since OpenCL reports argument info only for programs built from source.
struct program_image {
  std::vector<unsigned char> binary;
  std::map<std::string, std::vector<kernel_param>> kernels;

  std::vector<std::byte> serialize() const {
    std::ostringstream out;
    out << "troupe-opencl 1\n" << kernels.size() << '\n';
    for (auto& [name, params] : kernels) {
      out << name << ' ' << params.size() << '\n';
      for (auto& p : params)
        out << static_cast<int>(p.what) << ' ' << p.size << ' '
            << (p.type_name.empty() ? "-" : p.type_name) << '\n';
    }
    out << binary.size() << '\n';
    auto text = out.str();
    std::vector<std::byte> blob(text.size() + binary.size());
    std::memcpy(blob.data(), text.data(), text.size());
    std::memcpy(blob.data() + text.size(), binary.data(), binary.size());
    return blob;
  }

  static program_image parse(std::span<const std::byte> blob, const std::string& device) {
    auto corrupt = [&] {
      return error(errc::device_error,
                   "cached OpenCL program for device '" + device + "' is damaged");
    };
    std::string text(reinterpret_cast<const char*>(blob.data()), blob.size());
    std::istringstream in{text};
    std::string magic, magic_version;
    std::size_t count = 0;
    if (!(in >> magic >> magic_version >> count) || magic != "troupe-opencl" ||
        magic_version != "1" || count > 100000)
      throw corrupt();
    program_image image;
    for (std::size_t k = 0; k < count; ++k) {
      std::string name;
      std::size_t params = 0;
      if (!(in >> name >> params) || params > 1000) throw corrupt();
      auto& list = image.kernels[name];
      for (std::size_t i = 0; i < params; ++i) {
        int what = 0;
        kernel_param p;
        if (!(in >> what >> p.size >> p.type_name) || what < 0 || what > 4) throw corrupt();
        p.what = static_cast<kernel_param::kind>(what);
        p.type_name = p.type_name == "-" ? std::string{} : canonical_type(p.type_name);
        list.push_back(p);
      }
    }
    std::size_t size = 0;
    if (!(in >> size)) throw corrupt();
    in.get();  // the newline
    auto at = static_cast<std::size_t>(in.tellg());
    if (at + size != blob.size()) throw corrupt();
    image.binary.resize(size);
    std::memcpy(image.binary.data(), blob.data() + at, size);
    return image;
  }
};

class opencl_program final : public backend_program {
 public:
  opencl_program(cl_program program, context_ptr context, std::string log, program_image image)
      : program_(program),
        context_(std::move(context)),
        log_(std::move(log)),
        image_(std::move(image)) {}
  ~opencl_program() override { clReleaseProgram(program_); }

  /// Fetched only when asked for (by the disk cache): drivers may produce it lazily.
  std::vector<std::byte> binary() const override {
    if (image_.binary.empty()) image_.binary = program_binary(program_, context_->name);
    return image_.serialize();
  }
  std::string build_log() const override { return log_; }

  std::unique_ptr<backend_kernel> kernel(const std::string& name) override {
    auto found = image_.kernels.find(name);
    if (found == image_.kernels.end()) {
      std::string names;
      for (auto& [n, params] : image_.kernels) names += (names.empty() ? "" : ", ") + n;
      throw error(errc::invalid_argument,
                  "program for device '" + context_->name + "' has no kernel '" + name +
                      "' (it has: " + (names.empty() ? "none" : names) + ")");
    }
    auto k = std::make_unique<opencl_kernel>(program_, context_);
    k->name = name;
    k->params = found->second;
    k->give_back(k->take());  // fail now, not at the first launch, if the kernel is unusable
    return k;
  }

 private:
  cl_program program_;
  context_ptr context_;
  std::string log_;
  mutable program_image image_;
};

class opencl_queue final : public backend_queue {
 public:
  /// `staging`: where pageable copies go through, or null to hand them to the driver.
  /// `one_launching_thread`: see prefers_one_launching_thread().
  opencl_queue(cl_command_queue queue, context_ptr context,
               std::shared_ptr<opencl_memory_cache> memory, std::shared_ptr<opencl_staging> staging,
               bool one_launching_thread)
      : queue_(queue),
        context_(std::move(context)),
        memory_(std::move(memory)),
        staging_(std::move(staging)),
        one_launching_thread_(one_launching_thread) {}
  ~opencl_queue() override {
    clFinish(queue_);  // commands still hold our memory; the frontend holds their events
    clReleaseCommandQueue(queue_);
  }

  event_ptr write(backend_memory& dst, std::size_t offset, const void* src, std::size_t bytes,
                  bool pinned, wait_list wait) override {
    if (!pinned && staged(bytes)) return staged_write(dst, offset, src, bytes, wait);
    return enqueue("clEnqueueWriteBuffer", wait, [&](cl_uint n, const cl_event* w, cl_event* e) {
      return clEnqueueWriteBuffer(queue_, mem(dst), CL_FALSE, offset, bytes, src, n, w, e);
    });
  }

  event_ptr read(backend_memory& src, std::size_t offset, void* dst, std::size_t bytes, bool pinned,
                 intrusive_ptr<destination_gate> ready, wait_list wait) override {
    if (!pinned && staged(bytes))
      return staged_read(src, offset, dst, bytes, std::move(ready), wait);
    if (ready) refuse_unstaged_gate(context_->name, bytes);
    return enqueue("clEnqueueReadBuffer", wait, [&](cl_uint n, const cl_event* w, cl_event* e) {
      return clEnqueueReadBuffer(queue_, mem(src), CL_FALSE, offset, bytes, dst, n, w, e);
    });
  }

  bool stages_reads_of(std::size_t bytes) const noexcept override { return staged(bytes); }
  /// Measured on NVIDIA's OpenCL; on others, one thread costs little. TROUPE_OPENCL_LAUNCHING
  /// turns it off, so that tests on PoCL also run the rule of a backend without the preference.
  bool prefers_one_launching_thread() const noexcept override { return one_launching_thread_; }

  event_ptr fill(backend_memory& dst, std::size_t offset, std::size_t bytes, const void* pattern,
                 std::size_t pattern_size, wait_list wait) override {
    return enqueue("clEnqueueFillBuffer", wait, [&](cl_uint n, const cl_event* w, cl_event* e) {
      return clEnqueueFillBuffer(queue_, mem(dst), pattern, pattern_size, offset, bytes, n, w, e);
    });
  }

  event_ptr copy(backend_memory& src, std::size_t src_offset, backend_memory& dst,
                 std::size_t dst_offset, std::size_t bytes, wait_list wait) override {
    return enqueue("clEnqueueCopyBuffer", wait, [&](cl_uint n, const cl_event* w, cl_event* e) {
      return clEnqueueCopyBuffer(queue_, mem(src), mem(dst), src_offset, dst_offset, bytes, n, w,
                                 e);
    });
  }

  event_ptr launch(backend_kernel& kernel, const launch_shape& shape,
                   std::span<const kernel_argument> args, wait_list wait,
                   launch_event marking) override {
    if (shape.shared_bytes != 0)
      throw error(errc::invalid_argument,
                  "launch of kernel '" + kernel.name + "' on OpenCL device '" + context_->name +
                      "': dynamic shared memory is CUDA's; pass a local_memory<T> argument");
    auto& k = static_cast<opencl_kernel&>(kernel);
    cl_kernel handle = k.take();
    struct give_back_on_exit {
      opencl_kernel& k;
      cl_kernel h;
      ~give_back_on_exit() { k.give_back(h); }
    } guard{k, handle};
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto& a = args[i];
      cl_int status = CL_SUCCESS;
      auto index = static_cast<cl_uint>(i);
      switch (a.what) {
        case kernel_argument::kind::memory: {
          cl_mem m = a.memory != nullptr ? static_cast<opencl_memory*>(a.memory)->mem : nullptr;
          status = clSetKernelArg(handle, index, sizeof m, &m);
          break;
        }
        case kernel_argument::kind::scalar:
          status = clSetKernelArg(handle, index, a.size, a.scalar.data());
          break;
        case kernel_argument::kind::local:
          status = clSetKernelArg(handle, index, a.size, nullptr);
          break;
      }
      if (status != CL_SUCCESS)
        throw error(errc::invalid_argument, "launch of kernel '" + kernel.name + "' on device '" +
                                                context_->name + "': argument " +
                                                std::to_string(i) +
                                                " was refused: " + opencl_error_name(status));
    }
    stage_trace::record(stage_trace::point::driver_call);
    bool has_offset = shape.offset[0] + shape.offset[1] + shape.offset[2] != 0;
    bool has_local = shape.local[0] != 0;
    return enqueue(
        "clEnqueueNDRangeKernel", wait,
        [&](cl_uint n, const cl_event* w, cl_event* e) {
          return clEnqueueNDRangeKernel(
              queue_, handle, shape.dimensions, has_offset ? shape.offset.data() : nullptr,
              shape.global.data(), has_local ? shape.local.data() : nullptr, n, w, e);
        },
        {}, marking);
  }

  void flush() override { clFlush(queue_); }

  event_ptr mark() override {
    try {
      return enqueue("clEnqueueMarkerWithWaitList", {},
                     [&](cl_uint n, const cl_event* w, cl_event* e) {
                       return clEnqueueMarkerWithWaitList(queue_, n, w, e);
                     });
    } catch (...) {
      clFinish(queue_);  // what the marker was to cover may still use its memory
      throw;
    }
  }

 private:
  /// Smaller copies go to the driver: its pinning costs little for them.
  static constexpr std::size_t staged_from = std::size_t{256} << 10;
  /// So do larger ones: their blocks would crowd out the pool's 2 GiB, and a fresh block costs
  /// more to pin than the driver's pinning of the copy (a 12000 x 12000 request took 3.0 s
  /// staged through new blocks, 2.1 s not, when the pool kept 1 GiB of power-of-two blocks).
  static constexpr std::size_t staged_up_to = std::size_t{1} << 30;

  bool staged(std::size_t bytes) const noexcept {
    return staging_ && bytes >= staged_from && bytes <= staged_up_to;
  }

  static cl_mem mem(backend_memory& m) { return static_cast<opencl_memory&>(m).mem; }

  static std::vector<cl_event> handles(wait_list wait) {
    std::vector<cl_event> events;
    events.reserve(wait.size());
    for (auto* e : wait) events.push_back(static_cast<opencl_event*>(e)->handle());
    return events;
  }

  /// `op(count, wait_events, event)` enqueues one command; its event is returned, or none with
  /// launch_event::none.
  template <class Enqueue>
  event_ptr enqueue(const char* call, wait_list wait, Enqueue&& op, opencl_staged_copy staged = {},
                    launch_event marking = launch_event::own) {
    const std::vector<cl_event> events = handles(wait);
    cl_event done = nullptr;
    memory_->check_enqueue(
        op(static_cast<cl_uint>(events.size()), events.empty() ? nullptr : events.data(),
           marking == launch_event::own ? &done : nullptr),
        call);
    event_ptr result;
    if (done != nullptr)
      result = event_ptr{new opencl_event(done, context_, std::move(staged)), adopt_ref};
    stage_trace::record(stage_trace::point::driver_flush);
    if (marking != launch_event::held) clFlush(queue_);
    return result;
  }

  /// Copies `src` into a pinned block in chunks, each written to the device while the next is
  /// copied; the source may be reused once this returns.
  event_ptr staged_write(backend_memory& dst, std::size_t offset, const void* src,
                         std::size_t bytes, wait_list wait) {
    opencl_staged_copy staged{staging_, staging_->take(bytes)};
    const std::vector<cl_event> events = handles(wait);
    const std::size_t chunk = staging_chunk(bytes);
    auto* block = static_cast<std::byte*>(staged.block.data);
    cl_event done = nullptr;
    for (std::size_t at = 0; at < bytes; at += chunk) {
      const std::size_t length = std::min(chunk, bytes - at);
      staging_->copy(block + at, static_cast<const std::byte*>(src) + at, length);
      const bool first = at == 0;
      const bool last = at + length == bytes;
      const cl_int status = clEnqueueWriteBuffer(
          queue_, mem(dst), CL_FALSE, offset + at, length, block + at,
          first ? static_cast<cl_uint>(events.size()) : 0,
          first && !events.empty() ? events.data() : nullptr, last ? &done : nullptr);
      if (status != CL_SUCCESS) {
        clFinish(queue_);  // chunks enqueued before still read the block
        staging_->give_back(staged.block);
        memory_->check_enqueue(status, "clEnqueueWriteBuffer");
      }
      clFlush(queue_);
    }
    return event_ptr{new opencl_event(done, context_, std::move(staged)), adopt_ref};
  }

  /// Reads into a pinned block in chunks; the event copies each out to `dst` as it arrives
  /// (query()), and the rest in finish().
  event_ptr staged_read(backend_memory& src, std::size_t offset, void* dst, std::size_t bytes,
                        intrusive_ptr<destination_gate> ready, wait_list wait) {
    const std::vector<cl_event> events = handles(wait);
    opencl_staged_copy staged{staging_, staging_->take(bytes), dst, bytes, std::move(ready)};
    staged.chunk_bytes = staging_chunk(bytes);
    auto* block = static_cast<std::byte*>(staged.block.data);
    cl_event done = nullptr;  // the last chunk's event: the command's own
    for (std::size_t at = 0; at < bytes; at += staged.chunk_bytes) {
      const std::size_t length = std::min(staged.chunk_bytes, bytes - at);
      const bool first = at == 0;
      cl_event arrived = nullptr;
      const cl_int status =
          clEnqueueReadBuffer(queue_, mem(src), CL_FALSE, offset + at, length, block + at,
                              first ? static_cast<cl_uint>(events.size()) : 0,
                              first && !events.empty() ? events.data() : nullptr, &arrived);
      if (status != CL_SUCCESS) {
        give_back_after_failure(staged);
        memory_->check_enqueue(status, "clEnqueueReadBuffer");
      }
      if (at + length == bytes) {
        done = arrived;
        break;
      }
      try {
        staged.chunk_events.push_back(arrived);
      } catch (...) {
        clReleaseEvent(arrived);
        give_back_after_failure(staged);
        throw;
      }
    }
    stage_trace::record(stage_trace::point::driver_flush);
    clFlush(queue_);
    return event_ptr{new opencl_event(done, context_, std::move(staged)), adopt_ref};
  }

  /// After a chunk could not be enqueued: those enqueued before still use the block.
  void give_back_after_failure(opencl_staged_copy& staged) noexcept {
    clFinish(queue_);
    for (cl_event chunk : staged.chunk_events) clReleaseEvent(chunk);
    staging_->give_back(staged.block);
  }

  cl_command_queue queue_;
  context_ptr context_;
  std::shared_ptr<opencl_memory_cache> memory_;  // told when the device is out of memory
  std::shared_ptr<opencl_staging> staging_;
  bool one_launching_thread_;
};

class opencl_device final : public backend_device {
 public:
  /// `stage_cpu_copies`: a CPU device's pageable copies go through pinned blocks too.
  /// `one_launching_thread`: its queues prefer one launching thread.
  opencl_device(cl_platform_id platform, cl_device_id id, bool stage_cpu_copies,
                bool one_launching_thread)
      : context_(std::make_shared<opencl_context>()),
        stage_cpu_copies_(stage_cpu_copies),
        one_launching_thread_(one_launching_thread) {
    info.name = device_string(id, CL_DEVICE_NAME);
    info.vendor = device_string(id, CL_DEVICE_VENDOR);
    info.driver = device_string(id, CL_DRIVER_VERSION);
    info.backend = backend::opencl;
    auto type = device_value<cl_device_type>(id, CL_DEVICE_TYPE);
    info.type = (type & CL_DEVICE_TYPE_GPU)           ? device_type::gpu
                : (type & CL_DEVICE_TYPE_CPU)         ? device_type::cpu
                : (type & CL_DEVICE_TYPE_ACCELERATOR) ? device_type::accelerator
                                                      : device_type::other;
    info.global_memory = device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
    info.compute_units = device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS);
    info.max_work_group_size = device_value<std::size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    info.opencl_version = parse_version(device_string(id, CL_DEVICE_VERSION));
    identity_ = "opencl|" + platform_string(platform, CL_PLATFORM_NAME) + "|" + info.name + "|" +
                info.driver + "|" + device_string(id, CL_DEVICE_VERSION);
    context_->device = id;
    context_->name = info.name;
    cl_int status = CL_SUCCESS;
    context_->context = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &status);
    check_opencl(status, "clCreateContext", info.name);
    memory_ = std::make_shared<opencl_memory_cache>(
        context_, kept_memory_limit(info.global_memory),
        static_cast<std::size_t>(device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE)));
  }

  std::unique_ptr<backend_memory> allocate(std::size_t bytes) override {
    return std::make_unique<opencl_memory>(memory_, bytes);
  }

  std::unique_ptr<backend_host_memory> allocate_host(std::size_t bytes) override {
    cl_int status = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context_->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                              nullptr, &status);
    check_opencl(status, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", info.name);
    cl_command_queue q = clCreateCommandQueue(context_->context, context_->device, 0, &status);
    if (status != CL_SUCCESS) clReleaseMemObject(m);
    check_opencl(status, "clCreateCommandQueue", info.name);
    // Mapping once is how OpenCL hands out page-locked host memory; it is a host-side call.
    void* data = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr,
                                    nullptr, &status);
    if (status != CL_SUCCESS) {
      clReleaseCommandQueue(q);
      clReleaseMemObject(m);
    }
    check_opencl(status, "clEnqueueMapBuffer", info.name);
    auto memory = std::make_unique<opencl_host_memory>(m, q, context_);
    memory->data = data;
    memory->bytes = bytes;
    return memory;
  }

  std::unique_ptr<backend_queue> make_queue() override {
    cl_int status = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(context_->context, context_->device, 0, &status);
    check_opencl(status, "clCreateCommandQueue", info.name);
    return std::make_unique<opencl_queue>(q, context_, memory_, staging(), one_launching_thread_);
  }

  std::unique_ptr<backend_program> build(const std::string& source,
                                         const std::string& options) override {
    const char* text = source.c_str();
    std::size_t length = source.size();
    cl_int status = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(context_->context, 1, &text, &length, &status);
    check_opencl(status, "clCreateProgramWithSource", info.name);
    // Argument info lets launches check argument types; it costs nothing at run time. NVIDIA's
    // compiler (driver 580) rejects it for kernels without parameters, so a failed build is
    // retried without it: then launches check the argument count only.
    auto with_info = options + " -cl-kernel-arg-info";
    status = clBuildProgram(p, 1, &context_->device, with_info.c_str(), nullptr, nullptr);
    if (status != CL_SUCCESS)
      status = clBuildProgram(p, 1, &context_->device, options.c_str(), nullptr, nullptr);
    auto log = build_log(p);
    if (status != CL_SUCCESS) {
      clReleaseProgram(p);
      if (status == CL_BUILD_PROGRAM_FAILURE || status == CL_INVALID_BUILD_OPTIONS ||
          status == CL_COMPILE_PROGRAM_FAILURE)
        throw error(errc::compile_error, "OpenCL program for device '" + info.name +
                                             "' did not compile (" + opencl_error_name(status) +
                                             "), options '" + options + "':\n" + log);
      check_opencl(status, "clBuildProgram", info.name);
    }
    program_image image;
    try {
      image.kernels = kernel_params(p);
    } catch (...) {
      clReleaseProgram(p);
      throw;
    }
    return std::make_unique<opencl_program>(p, context_, std::move(log), std::move(image));
  }

  std::unique_ptr<backend_program> load(std::span<const std::byte> blob) override {
    auto image = program_image::parse(blob, info.name);
    const unsigned char* data = image.binary.data();
    std::size_t size = image.binary.size();
    cl_int binary_status = CL_SUCCESS;
    cl_int status = CL_SUCCESS;
    cl_program p = clCreateProgramWithBinary(context_->context, 1, &context_->device, &size, &data,
                                             &binary_status, &status);
    check_opencl(status, "clCreateProgramWithBinary", info.name);
    status = clBuildProgram(p, 1, &context_->device, "", nullptr, nullptr);
    if (status != CL_SUCCESS) clReleaseProgram(p);
    check_opencl(status, "clBuildProgram (from the cached binary)", info.name);
    return std::make_unique<opencl_program>(p, context_, std::string{}, std::move(image));
  }

  std::string cache_identity() const override { return identity_; }
  const void* domain() const noexcept override { return context_->context; }

 private:
  std::string build_log(cl_program p) const {
    std::size_t size = 0;
    clGetProgramBuildInfo(p, context_->device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    if (size != 0)
      clGetProgramBuildInfo(p, context_->device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    log.resize(std::strlen(log.c_str()));
    while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
    return log;
  }

  std::map<std::string, std::vector<kernel_param>> kernel_params(cl_program p) const {
    cl_uint count = 0;
    check_opencl(clCreateKernelsInProgram(p, 0, nullptr, &count), "clCreateKernelsInProgram",
                 info.name);
    std::vector<cl_kernel> kernels(count);
    if (count != 0)
      check_opencl(clCreateKernelsInProgram(p, count, kernels.data(), nullptr),
                   "clCreateKernelsInProgram", info.name);
    std::map<std::string, std::vector<kernel_param>> out;
    for (auto k : kernels) {
      std::size_t size = 0;
      clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size);
      std::string name(size, '\0');
      clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, size, name.data(), nullptr);
      name.resize(std::strlen(name.c_str()));
      cl_uint args = 0;
      clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
      auto& params = out[name];
      for (cl_uint i = 0; i < args; ++i) {
        kernel_param param;
        cl_kernel_arg_address_qualifier address = CL_KERNEL_ARG_ADDRESS_PRIVATE;
        if (clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof address, &address,
                               nullptr) == CL_SUCCESS) {
          std::size_t type_size = 0;
          clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, 0, nullptr, &type_size);
          std::string type(type_size, '\0');
          clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, type_size, type.data(), nullptr);
          type.resize(std::strlen(type.c_str()));
          param.type_name = canonical_type(type);
          param.what = address == CL_KERNEL_ARG_ADDRESS_GLOBAL ? kernel_param::kind::global_pointer
                       : address == CL_KERNEL_ARG_ADDRESS_CONSTANT
                           ? kernel_param::kind::constant_pointer
                       : address == CL_KERNEL_ARG_ADDRESS_LOCAL ? kernel_param::kind::local_pointer
                                                                : kernel_param::kind::scalar;
          if (param.what == kernel_param::kind::scalar) param.size = scalar_size(param.type_name);
        }
        params.push_back(param);
      }
      clReleaseKernel(k);
    }
    return out;
  }

  /// The pinned blocks that a GPU's pageable copies go through, made with its first queue; none
  /// for a CPU device, whose device memory is host memory already, unless asked for.
  std::shared_ptr<opencl_staging> staging() {
    if (info.type == device_type::cpu && !stage_cpu_copies_) return nullptr;
    std::lock_guard lock(staging_mutex_);
    if (!staging_) staging_ = std::make_shared<opencl_staging>(context_);
    return staging_;
  }

  context_ptr context_;
  bool stage_cpu_copies_;
  bool one_launching_thread_;
  std::shared_ptr<opencl_memory_cache> memory_;
  std::string identity_;
  std::mutex staging_mutex_;
  std::shared_ptr<opencl_staging> staging_;
};

/// The value of environment variable `name`: `choices` front when unset; empty, with `why` set,
/// when it is none of them.
std::string setting(const char* name, std::initializer_list<const char*> choices,
                    std::string& why) {
  const char* value = std::getenv(name);
  if (value == nullptr) return *choices.begin();
  for (const char* choice : choices)
    if (std::string_view{value} == choice) return value;
  std::string expected;
  for (const char* choice : choices)
    expected += (expected.empty() ? "'" : " or '") + std::string{choice} + "'";
  why = std::string{"environment variable "} + name + ": expected " + expected + ", found '" +
        value + "'";
  return {};
}

}  // namespace

backend_discovery discover_opencl() {
  backend_discovery found;
  // "all" stages a CPU device's copies as a GPU's, so that tests on PoCL run the staged paths.
  const std::string staging_mode =
      setting("TROUPE_OPENCL_STAGING", {"auto", "all"}, found.unavailable_reason);
  // "any-thread": queues without the preference for one launching thread (as CUDA's), so that
  // tests on PoCL run that rule too.
  const std::string launching =
      setting("TROUPE_OPENCL_LAUNCHING", {"one-thread", "any-thread"}, found.unavailable_reason);
  if (!found.unavailable_reason.empty()) return found;
  cl_uint platforms = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &platforms);
  if (status != CL_SUCCESS || platforms == 0) {
    found.unavailable_reason =
        status == CL_SUCCESS || status == -1001  // CL_PLATFORM_NOT_FOUND_KHR
            ? "no OpenCL platform is installed (no ICD in /etc/OpenCL/vendors)"
            : std::string{"clGetPlatformIDs failed: "} + opencl_error_name(status);
    return found;
  }
  std::vector<cl_platform_id> ids(platforms);
  clGetPlatformIDs(platforms, ids.data(), nullptr);
  std::string problems;
  for (auto platform : ids) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> devices(count);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr);
    for (auto id : devices) {
      try {
        found.devices.push_back(std::make_unique<opencl_device>(platform, id, staging_mode == "all",
                                                                launching == "one-thread"));
      } catch (const error& e) {
        problems += (problems.empty() ? "" : "; ") + std::string{e.what()};
      }
    }
  }
  if (found.devices.empty())
    found.unavailable_reason = problems.empty() ? "the OpenCL platforms have no devices" : problems;
  return found;
}

}  // namespace troupe::detail
