#include "troupe/device/detail/device_state.hpp"

#include "device/backend.hpp"
#include "device/copy_issuer.hpp"
#include "device/device_manager.hpp"
#include "troupe/async/promise.hpp"
#include "troupe/device/detail/fresh_memory.hpp"
#include "troupe/device/program.hpp"

namespace troupe::detail {

device_state::device_state(device_manager& manager, std::unique_ptr<backend_device> backend,
                           intrusive_ptr<executor> results)
    : manager_(&manager),
      backend_(std::move(backend)),
      results_(std::move(results)),
      retired_(manager.completions().retirement()),
      fresh_(manager.fresh()) {}

device_state::~device_state() = default;

const device_info& device_state::info() const noexcept {
  return backend_->info;
}

std::size_t device_state::waits_on_workers() const noexcept {
  return backend_->waits().on_workers();
}

bool device_state::is_open() const {
  std::shared_lock guard{open_mutex_};
  return manager_ != nullptr;
}

void device_state::check_open(const char* caller) const {
  if (!is_open())
    throw error(errc::system_gone, std::string{caller} + ": device '" + info().name +
                                       "' belongs to an actor system that is gone");
}

void device_state::close() {
  {
    std::unique_lock guard{open_mutex_};
    manager_ = nullptr;
  }
  std::map<std::string, shared_future<program>> programs;
  copy_issuer* copies = nullptr;
  {
    std::lock_guard guard{mutex_};
    programs.swap(programs_);  // cached programs hold this state: break the cycle
    copies = copies_.get();
  }
  // Issues what it was handed still (its commands are watched by the completion queue, which
  // stops after the devices close), then ends its thread; issue_on_copy_thread() fails from now.
  if (copies != nullptr) copies->stop();
}

bool device_state::issue_on_copy_thread(intrusive_ptr<queue_state> queue) {
  copy_issuer* copies = nullptr;
  {
    auto open = hold_open();  // before mutex_, as in compile()
    if (manager_ == nullptr) return false;
    std::lock_guard guard{mutex_};
    if (!copies_) copies_ = std::make_unique<copy_issuer>(manager_->completions());
    copies = copies_.get();
  }
  // Outside the locks: close() may be stopping it, and then it refuses.
  return copies->issue_later(std::move(queue));
}

void device_state::set_blocking_issue_hook(std::function<void()> hook) {
  blocking_issue_hook_ = std::move(hook);
  has_blocking_issue_hook_.store(true, std::memory_order_release);
}

queue_state& device_state::default_queue() {
  bool open = is_open();  // before mutex_: compile() takes the two locks in the other order
  std::lock_guard guard{mutex_};
  if (!default_queue_) {
    // Once closed, a queue without a backend queue still answers every command with
    // errc::system_gone.
    std::unique_ptr<backend_queue> q;
    if (open) q = backend_->make_queue();
    default_queue_ =
        intrusive_ptr<queue_state>{new queue_state(*this, false, std::move(q)), adopt_ref};
  }
  return *default_queue_;
}

intrusive_ptr<queue_state> device_state::make_queue() {
  check_open("device::make_queue");
  return intrusive_ptr<queue_state>{new queue_state(*this, true, backend_->make_queue()),
                                    adopt_ref};
}

future<program> device_state::compile(const std::string& source, const std::string& options) {
  auto as_future = [](const shared_future<program>& shared) {
    return shared.then(inline_execution, [](const program& p) { return p; });
  };
  auto open = hold_open();
  std::unique_lock lock{mutex_};
  if (manager_ == nullptr)
    return make_exceptional_future<program>(error(
        errc::system_gone,
        "device::compile: device '" + info().name + "' belongs to an actor system that is gone"));
  auto key = options;
  key += '\0';
  key += source;
  if (auto found = programs_.find(key); found != programs_.end()) return as_future(found->second);

  // Shared, since the compiler's job queue holds copyable functions.
  auto done = std::make_shared<promise<program>>(*results_);
  auto shared = done->get_future().share();
  programs_.emplace(key, shared);
  auto& manager = *manager_;
  lock.unlock();
  if (auto elsewhere = backend_->build_elsewhere(source, options)) {
    std::move(*elsewhere)
        .then(inline_execution, [self = intrusive_ptr<device_state>{this},
                                 done](future<std::unique_ptr<backend_program>> built) mutable {
          try {
            auto made = built.get();
            const bool from_cache = made->from_cache();
            done->set_value(program{intrusive_ptr<program_state>{
                new program_state(self, std::move(made), from_cache), adopt_ref}});
          } catch (...) {
            done->set_exception(std::current_exception());
          }
        });
    return as_future(shared);
  }
  // Still under hold_open(): the manager cannot stop its compiler before this job is queued.
  manager.compile_later(
      [self = intrusive_ptr<device_state>{this}, &manager, source, options, done]() mutable {
        try {
          auto& dev = self->backend();
          auto disk_key = dev.cache_identity();
          disk_key += '\0';
          disk_key += options;
          disk_key += '\0';
          disk_key += source;
          std::unique_ptr<backend_program> built;
          bool from_cache = false;
          const bool cached = dev.caches_on_disk();
          if (auto binary = cached ? manager.cache().load(disk_key) : std::nullopt) {
            try {
              built = dev.load(*binary);
              from_cache = true;
            } catch (const error&) {
              built.reset();  // a stale or damaged entry: compile again and overwrite it
            }
          }
          if (!built) {
            built = dev.build(source, options);
            if (cached) manager.cache().store(disk_key, built->binary());
          }
          done->set_value(program{intrusive_ptr<program_state>{
              new program_state(self, std::move(built), from_cache), adopt_ref}});
        } catch (...) {
          done->set_exception(std::current_exception());
        }
      });
  return as_future(shared);
}

}  // namespace troupe::detail
