#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "troupe/async/error.hpp"
#include "troupe/core/message.hpp"
#include "troupe/core/message_id.hpp"

namespace troupe {

class actor_system;
class abstract_actor;
class actor;
class actor_addr;
struct mailbox_element;

using actor_id = std::uint64_t;
using mailbox_element_ptr = std::unique_ptr<mailbox_element>;

/// Strong handle to an actor: the actor stays alive (can receive) while one exists. Cheap to
/// copy; equal handles name the same actor. Actors, scoped actors and composed actors all have
/// this one handle type.
class actor {
 public:
  // -- constructors ---------------------------------------------------------

  actor() noexcept = default;
  actor(const actor& other) noexcept;
  actor(actor&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  actor& operator=(actor other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }
  ~actor();

  /// Adopts one strong reference that the caller already holds.
  static actor adopt(abstract_actor* ptr) noexcept {
    actor result;
    result.ptr_ = ptr;
    return result;
  }

  // -- properties -----------------------------------------------------------

  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  abstract_actor* operator->() const noexcept { return ptr_; }
  abstract_actor* get() const noexcept { return ptr_; }
  actor_id id() const noexcept;
  actor_addr address() const noexcept;

  friend bool operator==(const actor& a, const actor& b) noexcept { return a.ptr_ == b.ptr_; }

 private:
  abstract_actor* ptr_ = nullptr;
};

/// Weak handle: names an actor without keeping it alive (monitors, links, down messages).
class actor_addr {
 public:
  actor_addr() noexcept = default;
  explicit actor_addr(abstract_actor* ptr) noexcept;
  actor_addr(const actor_addr& other) noexcept;
  actor_addr(actor_addr&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), id_(other.id_) {}
  actor_addr& operator=(actor_addr other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(id_, other.id_);
    return *this;
  }
  ~actor_addr();

  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  actor_id id() const noexcept { return id_; }

  /// A strong handle, or an empty one if the actor is gone.
  actor lock() const noexcept;

  friend bool operator==(const actor_addr& a, const actor_addr& b) noexcept {
    return a.ptr_ == b.ptr_;
  }
  friend bool operator==(const actor_addr& a, const actor& b) noexcept { return a.ptr_ == b.get(); }

 private:
  abstract_actor* ptr_ = nullptr;
  actor_id id_ = 0;
};

/// One message in a mailbox, with its routing: who sent it, its id, and for composed actors the
/// stages that get the result before the sender does (the next stage is at the back).
struct mailbox_element {
  mailbox_element() = default;
  mailbox_element(const mailbox_element&) = delete;
  mailbox_element& operator=(const mailbox_element&) = delete;

  /// Elements made by make_mailbox_element share one allocation with their message data.
  static void operator delete(mailbox_element* element, std::destroying_delete_t) noexcept {
    auto* block = element->block;
    element->~mailbox_element();
    if (block != nullptr) {
      block->release();
    } else {
      ::operator delete(element);
    }
  }

  mailbox_element* next = nullptr;
  actor sender;
  message_id mid;
  std::vector<actor> stages;
  message content;
  detail::shared_block* block = nullptr;
};

namespace detail {

/// Layout of one allocation that holds an element and its message data.
template <class Data>
struct element_block {
  shared_block header;
  alignas(mailbox_element) unsigned char element[sizeof(mailbox_element)];
  alignas(Data) unsigned char data[sizeof(Data)];
};

}  // namespace detail

template <class... Ts>
mailbox_element_ptr make_mailbox_element(actor sender, message_id mid, std::vector<actor> stages,
                                         Ts&&... xs) {
  using data_type = detail::typed_message_data<detail::strip_t<Ts>...>;
  mailbox_element* result;
  if constexpr (sizeof...(Ts) > 0 && alignof(data_type) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    using block_type = detail::element_block<data_type>;
    void* raw = ::operator new(sizeof(block_type));
    auto* block = static_cast<block_type*>(raw);
    auto* header = new (&block->header) detail::shared_block;
    data_type* data;
    try {
      data = new (block->data) data_type(std::forward<Ts>(xs)...);
    } catch (...) {
      ::operator delete(raw);
      throw;
    }
    data->set_block(header);
    result = new (block->element) mailbox_element;
    result->block = header;
    result->content = message{detail::intrusive_ptr<detail::message_data>{data, detail::adopt_ref}};
  } else {
    result = new mailbox_element;
    result->content = make_message(std::forward<Ts>(xs)...);
  }
  result->sender = std::move(sender);
  result->mid = mid;
  result->stages = std::move(stages);
  return mailbox_element_ptr{result};
}

/// Sent to a monitor when the monitored actor ends.
struct down_msg {
  actor_addr source;
  error reason;
};

/// Sent to linked actors when an actor ends. Unless trapped with an exit handler, an exit
/// message with a reason other than none ends the receiver with the same reason.
struct exit_msg {
  actor_addr source;
  error reason;
};

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

  actor_id id() const noexcept { return id_; }
  actor_system& system() const noexcept { return system_; }
  const std::string& name() const noexcept { return name_; }

  /// "name #id", for messages.
  std::string description() const;

  /// True once the actor has ended; its exit reason is then final.
  bool is_terminated() const;
  error exit_reason() const;

  // -- messaging ------------------------------------------------------------

  /// Delivers a message. Never throws and never blocks: a message to an ended actor is bounced
  /// (a request gets an error response at once).
  virtual void enqueue(mailbox_element_ptr element) = 0;

  // -- monitoring and linking -----------------------------------------------

  /// Runs `hook(reason)` when this actor ends (at once if it has). Returns a token for detach.
  std::uint64_t attach_hook(std::function<void(const error&)> hook);
  void detach_hook(std::uint64_t token);

  /// `observer` gets a down_msg when this actor ends (at once if it has).
  void add_monitor(const actor_addr& observer);
  void remove_monitor(const actor_addr& observer);

  /// One direction of a link: `peer` gets an exit_msg when this actor ends.
  void add_link(const actor_addr& peer);
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

  /// Bounces a message that can no longer be processed: a request gets `reason` as response.
  void bounce(mailbox_element& element, const error& reason);

 private:
  struct attachment {
    enum class kind : std::uint8_t { monitor, link, hook };
    kind type;
    actor_addr peer;
    std::function<void(const error&)> hook;
    std::uint64_t token = 0;
  };

  void attach(attachment entry);
  void notify(attachment& entry, const error& reason);

  std::atomic<std::size_t> strong_{1};
  std::atomic<std::size_t> weak_{1};
  actor_system& system_;
  actor_id id_;
  std::string name_;

  mutable std::mutex mutex_;
  bool finished_ = false;
  error exit_reason_;
  std::vector<attachment> attachments_;
  std::uint64_t next_token_ = 1;
};

namespace detail {

/// Sends an error response for the request in `element` (no-op for a non-request).
void respond_with_error(mailbox_element& element, const error& reason, abstract_actor* responder);

/// Routes a result: an error goes to the requester; otherwise to the next stage of a
/// composition if there is one, else back to the sender (as the response to a request, or as an
/// ordinary message if the result of an asynchronous message is not empty).
void route_result(actor& sender, message_id mid, std::vector<actor>& stages, message result,
                  abstract_actor* responder);

}  // namespace detail

}  // namespace troupe

template <>
struct std::hash<troupe::actor> {
  std::size_t operator()(const troupe::actor& a) const noexcept {
    return std::hash<troupe::abstract_actor*>{}(a.get());
  }
};
