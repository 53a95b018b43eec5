#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "troupe/async/future.hpp"
#include "troupe/core/actor.hpp"
#include "troupe/core/actor_registry.hpp"
#include "troupe/core/behavior.hpp"
#include "troupe/core/config.hpp"
#include "troupe/core/detail/scheduler.hpp"
#include "troupe/core/detail/timer_service.hpp"
#include "troupe/core/event_based_actor.hpp"
#include "troupe/core/node_id.hpp"

namespace troupe {

class cluster;
class device_selection;

namespace detail {

/// An actor whose behavior comes from a function given to spawn.
template <class Init>
class function_actor final : public event_based_actor {
 public:
  function_actor(actor_system& system, Init init)
      : event_based_actor(system, "actor"), init_(std::move(init)) {}

  behavior make_behavior() override {
    // Runs once; the function and what it captured are released right after, so spawn
    // arguments (handles, say) live only as long as the behavior keeps them.
    auto init = std::move(*init_);
    init_.reset();
    if constexpr (std::is_void_v<std::invoke_result_t<Init&, event_based_actor*>>) {
      init(this);
      return {};
    } else {
      return init(this);
    }
  }

 private:
  std::optional<Init> init_;
};

}  // namespace detail

/// Owns everything actors need: the scheduler, the timer, the registry, and the actors
/// themselves. There are no process-wide singletons: several systems may live in one process.
///
/// The destructor drops the registry's handles, then waits until every actor has ended. It
/// waits as long as anything in flight can still wake an actor: a job queued or running (a
/// handler blocked in get() included), a pending timer (a request's timeout), a device command
/// not yet completed, or a continuation that a job on a worker attached (then in a handler, a
/// handler's returned future) waiting for a promise that is still alive. Once none is left, the
/// actors that remain can never receive another message (a reference cycle, a handle kept in a
/// container that outlives the system): they are ended with errc::user_shutdown, and the
/// destructor returns once they have. Threads outside the system that hold handles or response
/// promises, or attach continuations themselves, are not waited for.
class actor_system {
 public:
  // -- constructors ---------------------------------------------------------

  explicit actor_system(config cfg = {});
  actor_system(const actor_system&) = delete;
  actor_system& operator=(const actor_system&) = delete;
  ~actor_system();

  // -- properties -----------------------------------------------------------

  const config& settings() const noexcept { return config_; }

  /// The scheduler, as an executor for future continuations and user jobs.
  executor& default_executor() noexcept { return *scheduler_; }

  actor_registry& registry() noexcept { return registry_; }

  /// Actors spawned and not yet ended.
  std::size_t running_actors() const;

  /// Blocks until every spawned actor has ended (scoped actors do not count).
  void await_all_actors_done();

  // -- devices --------------------------------------------------------------

  /// The OpenCL and CUDA devices of this machine, found on the first call. Defined by the
  /// device layer: include "troupe/device.hpp" and link troupe::device.
  device_selection devices();

  // -- nodes ----------------------------------------------------------------

  /// The nodes of the MPI job this system belongs to (a cluster of one without mpirun).
  /// Defined by the net layer: include "troupe/net.hpp" and link troupe::net.
  cluster& nodes();

  /// Spawns an actor type registered by name (config::add_actor_type) on `node`. The future
  /// fails with an error naming what is wrong: an unknown name, arguments of other types, a
  /// node that does not exist. Defined by the net layer.
  template <class... Args>
  future<actor> spawn_on(node_id node, const std::string& name, Args&&... args) {
    return spawn_on_with(node, name, make_message(std::forward<Args>(args)...));
  }
  future<actor> spawn_on_with(node_id node, const std::string& name, message args);

  /// The actor registered under `name` in the registry of `node`; fails if there is none.
  /// Defined by the net layer.
  future<actor> lookup_on(node_id node, const std::string& name);

  // -- extensions -----------------------------------------------------------

  /// State that a higher layer keeps per system (the device layer's manager): created on first
  /// use, stopped after all actors have ended and before the scheduler stops, then destroyed.
  class extension {
   public:
    virtual ~extension() = default;
    /// The system's destructor has begun: it now waits until its actors are done.
    virtual void shutdown_started() noexcept {}
    /// Finishes outstanding work; the scheduler still runs continuations meanwhile.
    virtual void stop() noexcept {}
  };

  /// The extension registered under `key`, made by `make` on first use.
  extension& extension_for(const void* key, std::unique_ptr<extension> (*make)(actor_system&));

  /// The extension registered under `key`, or null (none made yet, or the system is ending).
  extension* find_extension(const void* key);

  /// True once the destructor has begun.
  bool shutting_down() const noexcept { return shutting_down_.load(std::memory_order_acquire); }

  // -- spawning -------------------------------------------------------------

  /// Spawns an actor of class `Impl` (derived from event_based_actor), constructed with
  /// `(actor_system&, args...)`.
  template <class Impl, class... Args>
  requires std::is_base_of_v<event_based_actor, Impl> actor spawn(Args&&... args) {
    return launch(new Impl(*this, std::forward<Args>(args)...));
  }

  /// Spawns an actor from a function. Either `f(event_based_actor* self, args...)`, which
  /// returns the actor's behavior (or sets it with become); or, without extra arguments, a
  /// plain handler such as `[](int a, int b) { return a + b; }`, which becomes the behavior.
  template <class F, class... Args>
  requires(!std::is_base_of_v<event_based_actor, F>) actor spawn(F f, Args... args) {
    if constexpr (std::is_invocable_v<F&, event_based_actor*, Args&...>) {
      auto init = [f = std::move(f), ... args = std::move(args)](event_based_actor* self) mutable {
        return f(self, args...);
      };
      return launch(new detail::function_actor<decltype(init)>(*this, std::move(init)));
    } else {
      static_assert(sizeof...(Args) == 0,
                    "spawn(f, args...): f must take (event_based_actor*, args...)");
      auto init = [f = std::move(f)](event_based_actor*) mutable { return behavior{std::move(f)}; };
      return launch(new detail::function_actor<decltype(init)>(*this, std::move(init)));
    }
  }

  /// Spawns a kernel actor. Defined by the kernel layer (troupe::spawn_kernel_in): include
  /// "troupe/kernel.hpp" and link troupe::kernel.
  template <class... Args>
  actor spawn_kernel(Args&&... args) {
    return spawn_kernel_in(*this, std::forward<Args>(args)...);
  }

  // -- internals ------------------------------------------------------------

  detail::scheduler& scheduler() noexcept { return *scheduler_; }
  detail::timer_service& timers() noexcept { return *timers_; }
  actor_id next_actor_id() noexcept { return next_id_.fetch_add(1, std::memory_order_relaxed); }

  /// Called once by each spawned actor when it ends.
  void actor_finished(event_based_actor* self);

  /// How often the destructor has looked whether anything can still wake the actors left (for
  /// tests: a test waits until the destructor has seen what it set up).
  std::size_t shutdown_checks() const noexcept {
    return shutdown_checks_.load(std::memory_order_relaxed);
  }

 private:
  actor launch(event_based_actor* fresh);
  /// Undoes the constructor when joining the other nodes failed.
  void shutdown_unstarted() noexcept;
  void await_all_actors();
  /// Whether no job, timer or work in flight is left that could still wake an actor.
  bool nothing_can_wake_actors() const;
  void stop_remaining_actors();

  config config_;
  std::atomic<actor_id> next_id_{1};
  detail::intrusive_ptr<detail::scheduler> scheduler_;
  std::unique_ptr<detail::timer_service> timers_;
  actor_registry registry_;

  // Live actors, in shards so that spawning and ending on many workers do not share one lock.
  struct live_shard {
    std::mutex mutex;
    event_based_actor* head = nullptr;
  };
  static constexpr std::size_t live_shards = 32;
  live_shard& shard_of(const event_based_actor* a) { return live_[a->id() % live_shards]; }

  std::array<live_shard, live_shards> live_;
  std::atomic<std::size_t> live_count_{0};
  std::mutex done_mutex_;  // guards nothing but the wait for live_count_ == 0
  std::condition_variable all_done_;
  std::atomic<std::size_t> shutdown_checks_{0};
  std::atomic<bool> shutting_down_{false};
  std::mutex extensions_mutex_;
  std::vector<std::pair<const void*, std::unique_ptr<extension>>> extensions_;
};

template <class Impl, class... Args>
requires std::is_base_of_v<event_based_actor, Impl> actor event_based_actor::spawn(Args&&... args) {
  return system().spawn<Impl>(std::forward<Args>(args)...);
}

template <class F, class... Args>
requires(!std::is_base_of_v<event_based_actor, F>) actor event_based_actor::spawn(F f,
                                                                                  Args... args) {
  return system().spawn(std::move(f), std::move(args)...);
}

namespace detail {

template <class F, class Self, class... Args>
actor_factory make_actor_factory(const std::string& name, F make, type_list<Self, Args...>) {
  static_assert(std::is_same_v<Self, event_based_actor*>,
                "add_actor_type: the function must take (event_based_actor* self, args...)");
  const std::string arguments = type_names(type_list_of<strip_t<Args>...>);
  auto spawn = [make, name, arguments](actor_system& system, const message& given) -> actor {
    if (!given.match<strip_t<Args>...>())
      throw error(errc::invalid_argument, "spawn of actor type '" + name +
                                              "': expected arguments " + arguments + ", found " +
                                              given.type_names());
    return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      return system.spawn(make, given.get_as<strip_t<Args>>(Is)...);
    }
    (std::index_sequence_for<Args...>{});
  };
  return actor_factory{arguments, std::move(spawn)};
}

}  // namespace detail

template <class F>
config& config::add_actor_type(std::string name, F make) {
  auto factory = detail::make_actor_factory(name, std::move(make),
                                            typename detail::callable_traits<F>::args{});
  actor_types.insert_or_assign(std::move(name), std::move(factory));
  return *this;
}

}  // namespace troupe
