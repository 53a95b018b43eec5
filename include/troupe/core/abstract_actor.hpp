#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "troupe/async/error.hpp"
#include "troupe/core/actor_addr.hpp"
#include "troupe/core/actor_id.hpp"

namespace troupe {

class actor_system;
struct mailbox_element;

namespace detail {
struct type_list_info;
}  // namespace detail

/// Owns one message on its way into a mailbox (see mailbox_element.hpp).
using mailbox_element_ptr = std::unique_ptr<mailbox_element>;

/// The base of everything a handle can name. Two counters: strong references keep the actor
/// reachable; weak references (plus one for all strong ones together) keep the memory.
class abstract_actor {
 public:
  // -- constructors ---------------------------------------------------------

  abstract_actor(actor_system& system, std::string name);
  abstract_actor(const abstract_actor&) = delete;
  abstract_actor& operator=(const abstract_actor&) = delete;
  virtual ~abstract_actor();

  // -- properties -----------------------------------------------------------

  /// Unique within its actor system.
  actor_id id() const noexcept { return id_; }
  /// The actor system it belongs to.
  actor_system& system() const noexcept { return system_; }
  /// The name it was given (not unique).
  const std::string& name() const noexcept { return name_; }

  /// "actor 'name' #id", for messages ("actor #id on node N" for one on another node).
  virtual std::string description() const;

  /// True if it stands for an actor on another node.
  bool is_remote() const noexcept { return remote_; }

  /// Throws troupe::error (invalid_argument) naming the type if messages of `types` cannot
  /// reach this actor: a remote actor takes only types that can cross nodes.
  void check_sendable(const detail::type_list_info& types) const {
    if (remote_) check_crossing(types);
  }

  /// True once the actor has ended; its exit reason is then final.
  bool is_terminated() const;
  /// Why it ended (none while it runs).
  error exit_reason() const;

  // -- messaging ------------------------------------------------------------

  /// Delivers a message. Never throws and never blocks: a message to an ended actor is bounced
  /// (a request gets an error response at once).
  virtual void enqueue(mailbox_element_ptr element) = 0;

  // -- monitoring and linking -----------------------------------------------

  /// Runs `hook(reason)` when this actor ends (at once if it has). Returns a token for detach.
  std::uint64_t attach_hook(std::function<void(const error&)> hook);
  /// Removes the hook of `token`, if it has not run.
  void detach_hook(std::uint64_t token);

  /// `observer` gets a down_msg when this actor ends (at once if it has).
  void add_monitor(const actor_addr& observer);
  /// Undoes one add_monitor.
  void remove_monitor(const actor_addr& observer);

  /// One direction of a link: `peer` gets an exit_msg when this actor ends.
  void add_link(const actor_addr& peer);
  /// Undoes add_link.
  void remove_link(const actor_addr& peer);

  // -- reference counting (used by handles) ---------------------------------

  void add_strong_ref() noexcept { strong_.fetch_add(1, std::memory_order_relaxed); }
  void release_strong_ref() noexcept;
  void add_weak_ref() noexcept { weak_.fetch_add(1, std::memory_order_relaxed); }
  void release_weak_ref() noexcept;
  bool try_add_strong_ref() noexcept;

 protected:
  /// Marks the actor as ended and notifies monitors, links and hooks. Returns false if it had
  /// ended already.
  bool finish(const error& reason);

  /// Called when the last strong reference is gone.
  virtual void on_unreachable();

  /// Called as a monitor, link or hook is attached while the actor runs (a proxy of an actor
  /// on another node then asks that node to report its end).
  virtual void on_watched() {}

  /// Bounces a message that can no longer be processed: a request gets `reason` as response.
  void bounce(mailbox_element& element, const error& reason);

  /// Marks a proxy of an actor on another node.
  void set_remote() noexcept { remote_ = true; }

 private:
  struct attachment {
    enum class kind : std::uint8_t { monitor, link, hook };
    kind type;
    actor_addr peer;
    std::function<void(const error&)> hook;
    std::uint64_t token = 0;
  };

  void attach(attachment entry);
  void check_crossing(const detail::type_list_info& types) const;
  void notify(attachment& entry, const error& reason);

  std::atomic<std::size_t> strong_{1};
  std::atomic<std::size_t> weak_{1};
  actor_system& system_;
  actor_id id_;
  std::string name_;
  bool remote_ = false;

  mutable std::mutex mutex_;
  bool finished_ = false;
  error exit_reason_;
  std::vector<attachment> attachments_;
  std::uint64_t next_token_ = 1;
};

}  // namespace troupe
