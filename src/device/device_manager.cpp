#include "device/device_manager.hpp"

#include "device/remote_device_source.hpp"
#include "troupe/device/device.hpp"
#include "troupe/support/thread_name.hpp"

namespace troupe::detail {

namespace {

completion_queue::mode mode_of(const config& cfg) {
  return cfg.device_completion == "callback" ? completion_queue::mode::callback
                                             : completion_queue::mode::polling;
}

std::unique_ptr<actor_system::extension> make_manager(actor_system& system) {
  return std::make_unique<device_manager>(system);
}

}  // namespace

device_manager::device_manager(actor_system& system)
    : completions_(mode_of(system.settings()), system.default_executor()),
      cache_(kernel_cache::directory_for(system.settings().kernel_cache)),
      system_(system),
      compiler_([this] { run_compiler(); }) {
  name_thread(compiler_, "troupe-compiler");
  intrusive_ptr<executor> results{&system.default_executor()};
  auto adopt = [&](backend b, backend_discovery found) {
    if (!found.unavailable_reason.empty()) unavailable_.push_back({b, found.unavailable_reason});
    for (auto& dev : found.devices)
      devices_.emplace_back(
          intrusive_ptr<device_state>{new device_state(*this, std::move(dev), results), adopt_ref});
  };
#ifdef TROUPE_HAS_OPENCL
  adopt(backend::opencl, discover_opencl());
#else
  unavailable_.push_back({backend::opencl, "troupe was built without OpenCL (TROUPE_WITH_OPENCL)"});
#endif
#ifdef TROUPE_HAS_CUDA
  adopt(backend::cuda, discover_cuda());
#else
  unavailable_.push_back({backend::cuda, "troupe was built without CUDA (TROUPE_WITH_CUDA)"});
#endif
}

device_manager::~device_manager() {
  stop();
}

device_manager& device_manager::of(actor_system& system) {
  static const char key = 0;  // its address names the device layer's extension
  return static_cast<device_manager&>(system.extension_for(&key, make_manager));
}

const std::vector<device>& device_manager::all_devices() {
  std::call_once(all_found_, [&] {
    auto* source =
        static_cast<remote_device_source*>(system_.find_extension(remote_device_source::key()));
    std::vector<device> all = devices_;
    if (source != nullptr) {
      // Written before the first list is handed out; the device server never reads it (it
      // names its node itself).
      for (auto& d : devices_) d.state()->backend().info.node = source->this_node();
      intrusive_ptr<executor> results{&system_.default_executor()};
      for (auto& dev : source->discover()) {
        dev->info.local = false;
        all.emplace_back(intrusive_ptr<device_state>{
            new device_state(*this, std::move(dev), results), adopt_ref});
      }
    }
    all_devices_ = std::move(all);
  });
  return all_devices_;
}

void device_manager::compile_later(std::function<void()> job) {
  {
    std::lock_guard guard{compile_mutex_};
    compile_jobs_.push_back(std::move(job));
  }
  compile_wake_.notify_one();
}

void device_manager::run_compiler() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock{compile_mutex_};
      compile_wake_.wait(lock, [&] { return stopping_ || !compile_jobs_.empty(); });
      if (compile_jobs_.empty()) return;
      job = std::move(compile_jobs_.front());
      compile_jobs_.pop_front();
    }
    job();
  }
}

void device_manager::stop() noexcept {
  // Closed first, so that nothing new starts; then what was started finishes.
  for (auto& d : all_devices_.empty() ? devices_ : all_devices_) d.state()->close();
  {
    std::lock_guard guard{compile_mutex_};
    stopping_ = true;
  }
  compile_wake_.notify_one();
  if (compiler_.joinable()) compiler_.join();
  completions_.stop();
  fresh_->close();
}

}  // namespace troupe::detail

namespace troupe {

device_selection actor_system::devices() {
  auto& manager = detail::device_manager::of(*this);
  return device_selection{manager.all_devices(), manager.unavailable()};
}

}  // namespace troupe
