#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "troupe/core/default_handler.hpp"

namespace troupe {

class actor;
class actor_system;
class message;

/// How an actor type registered by name is spawned (see config::add_actor_type).
struct actor_factory {
  /// "(int, std::string)": the arguments it takes, for error messages.
  std::string arguments;
  /// Spawns one in `system` from `args`; throws troupe::error if they do not fit.
  std::function<actor(actor_system& system, const message& args)> spawn;
};

/// Settings of an actor system. Defaults, overridden by the environment (TROUPE_THREADS,
/// TROUPE_THROUGHPUT, ...), overridden by the command line (--troupe.threads=N,
/// --troupe.throughput=N, ...; "--troupe.threads N" works too). Arguments that do not start with
/// --troupe. are left for the program in `remaining_args`.
struct config {
  /// Worker threads of the scheduler; 0 means one per hardware thread.
  std::size_t threads = 0;

  /// Messages an actor may process before it yields its worker to others.
  std::size_t throughput = 300;

  /// Spare worker threads that may take the places of workers blocked in future::get() (or
  /// wait) at once, so that `threads` workers keep running; started when first needed. A
  /// blocking wait on a worker beyond the limit throws troupe::error (errc::limit_reached).
  /// TROUPE_SPARE_THREADS, --troupe.spare-threads; 0 forbids blocking on workers.
  std::size_t spare_threads = 256;

  /// How the device layer learns that device commands have finished: "polling" (a completion
  /// thread queries events, and with 4 cores or more a worker stands by for the responses: two
  /// cores busy while commands are in flight) or "callback" (the driver calls back; no thread
  /// spins). TROUPE_DEVICE_COMPLETION, --troupe.device-completion.
  std::string device_completion = "polling";

  /// Where compiled device programs are cached on disk: a directory, "off", or empty for
  /// $XDG_CACHE_HOME/troupe/kernels (else ~/.cache/troupe/kernels). TROUPE_KERNEL_CACHE,
  /// --troupe.kernel-cache.
  std::string kernel_cache;

  /// Whether a system started by an MPI launcher (mpirun, srun) joins the job's other processes
  /// as nodes, where the net layer is linked: "auto" does, "off" keeps it a cluster of one (for
  /// a program that drives MPI itself and wants actors only within each process).
  /// TROUPE_NODES, --troupe.nodes.
  std::string nodes = "auto";

  /// What actors do with asynchronous messages that none of their handlers matches, unless an
  /// actor sets its own (event_based_actor::set_default_handler): one of
  /// troupe::default_handlers or a function of your own. Set in code only.
  troupe::default_handler default_handler = default_handlers::print_and_drop;

  /// The program's own arguments (argv[0] first), with troupe's removed.
  std::vector<std::string> remaining_args;

  /// Actor types that any node can spawn by name (actor_system::spawn_on).
  std::map<std::string, actor_factory, std::less<>> actor_types;

  /// Registers `make` under `name`: `make(event_based_actor* self, args...)` returns the new
  /// actor's behavior, as for actor_system::spawn. Every node of a job must register the same
  /// types (they run one program). Defined in actor_system.hpp.
  template <class F>
  config& add_actor_type(std::string name, F make);

  config() = default;

  /// Reads the environment, then `argv`. Throws troupe::error (invalid_argument) for an unknown
  /// --troupe.* option or a value that is not a positive integer, naming both.
  config(int argc, const char* const* argv);

  /// The worker count after resolving 0 to the hardware's thread count.
  std::size_t resolved_threads() const;
};

}  // namespace troupe
