#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <new>
#include <ranges>
#include <span>
#include <type_traits>
#include <utility>

#include "troupe/async/error.hpp"
#include "troupe/pgas/detail/code_address.hpp"
#include "troupe/pgas/detail/mailbox_set.hpp"
#include "troupe/pgas/world.hpp"

namespace troupe::pgas {

/// The lambda form of an actor: send(pe, [=](State& s) { ... }) runs the lambda on PE `pe`,
/// against that PE's `State`. The captured values are shipped; the code is not, since every PE
/// runs the same program. send(pe, data, [=](State& s, std::span<const T> elements) { ... })
/// ships a span of data with the captures, as one variable-size message. Aggregation, ordering
/// and termination are those of selector.
template <class State>
class lambda_actor : public detail::mailbox_set {
 public:
  // -- member types ---------------------------------------------------------

  /// What a lambda may take as its second parameter: who sent it, and a way to send more.
  class context {
   public:
    /// The PE that sent the lambda that runs now.
    int from() const noexcept { return from_; }
    /// This PE.
    int pe() const noexcept { return owner_->transport().pe(); }
    /// The number of PEs.
    int npes() const noexcept { return owner_->transport().npes(); }
    /// Sends another lambda, with data or without, from inside a handler.
    template <class... Arguments>
    void send(int pe, Arguments&&... arguments) {
      owner_->send(pe, std::forward<Arguments>(arguments)...);
    }

   private:
    friend class lambda_actor;
    context(lambda_actor& owner, int from) : owner_(&owner), from_(from) {}
    lambda_actor* owner_;
    int from_;
  };

  // -- constructors ---------------------------------------------------------

  /// An actor whose lambdas run against `state` (this PE's; it must outlive the actor).
  lambda_actor(world& owner, State& state)
      : mailbox_set(owner, 1, mailbox_graph::none(), "lambda_actor"), state_(&state) {}
  /// Leaving scope means done() on this PE; it waits until the actor has terminated.
  ~lambda_actor() override { settle(); }

  // -- operations -----------------------------------------------------------

  /// Runs `function` on PE `pe` as `function(state)` or `function(state, context)`.
  template <class F>
  void send(int pe, F function) {
    check_captures<F>();
    static_assert(std::is_invocable_v<F&, State&> || std::is_invocable_v<F&, State&, context&>,
                  "troupe::pgas::lambda_actor::send: the lambda must be callable as f(State&) "
                  "or f(State&, lambda_actor<State>::context&)");
    // The code's address travels once per block of lambdas of one type, the captures per call.
    static const std::uint64_t code = code_of(&invoke_block<F>);
    std::memcpy(reserve("send", 0, pe, sizeof(F), false, code), &function, sizeof(F));
  }

  /// Runs `function` on PE `pe` as `function(state, data)` or `function(state, data, context)`,
  /// where `data` there is a std::span<const T> into the receive buffer: the captures and the
  /// elements travel as one message. Throws troupe::error for a message over the size limit.
  template <class T, class F>
  void send(int pe, std::span<const T> data, F function) {
    check_captures<F>();
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= detail::record_alignment,
                  "troupe::pgas::lambda_actor::send: the data must be trivially copyable "
                  "elements aligned to at most 8 bytes, since they are copied to another process");
    static_assert(std::is_invocable_v<F&, State&, std::span<const T>> ||
                      std::is_invocable_v<F&, State&, std::span<const T>, context&>,
                  "troupe::pgas::lambda_actor::send: a lambda sent with data must be callable as "
                  "f(State&, std::span<const T>) or f(State&, std::span<const T>, "
                  "lambda_actor<State>::context&)");
    // A variable-size record, so its size travels with it; the code still goes once per block.
    static const std::uint64_t code = code_of(&invoke_with_data<F, T>);
    constexpr std::size_t at = data_offset<F, T>();
    std::byte* record = reserve("send", 0, pe, at + data.size_bytes(), true, code);
    std::memcpy(record, &function, sizeof(F));
    if (!data.empty()) std::memcpy(record + at, data.data(), data.size_bytes());
  }

  /// The same, with the data in a std::vector<T>, std::array<T, N> or another contiguous range.
  template <class Range, class F>
  void send(int pe, const Range& data, F function) {
    static_assert(
        std::ranges::contiguous_range<const Range&> && std::ranges::sized_range<const Range&>,
        "troupe::pgas::lambda_actor::send: the data must be contiguous, such as a "
        "std::span<const T>, std::vector<T> or std::array<T, N>");
    using element = std::ranges::range_value_t<const Range&>;
    send(pe, std::span<const element>(data), std::move(function));
  }

  /// The most elements of T that one send(pe, data, function) ships with `function`'s captures;
  /// longer data goes in pieces.
  template <class T, class F>
  std::size_t max_elements(const F&) const noexcept {
    const std::size_t room = transport().max_payload();
    return room < data_offset<F, T>() ? 0 : (room - data_offset<F, T>()) / sizeof(T);
  }

  /// No more lambdas from this PE's code outside the handlers.
  void done() { mark_roots_done(); }
  /// Lets this PE's lambdas run; sends partial buffers when there is nothing to receive.
  void yield() { yield_now(); }
  /// Blocks, running lambdas, until the actor has terminated on every PE. Throws troupe::error
  /// on every PE if a lambda threw on any (see selector::wait).
  void wait() { wait_terminated(); }
  /// Completes once the actor has terminated everywhere (see selector::finished).
  future<void> finished() { return finished_future(); }

  // Lambdas without data keep their blocks of fixed-size records: one look-up per block, then
  // one call that runs the whole block, the lambda inlined into its loop. Lambdas with data are
  // variable-size records, which the engine hands over one at a time with their size; they have
  // an invoker type of their own.
  // A lambda that throws is kept as the actor's error (mailbox_set::guarded); the others run.
  void dispatch(std::size_t, const std::byte* payload, std::size_t bytes, int from,
                std::uint64_t code) override {
    guarded(0, from,
            [&] { reinterpret_cast<data_invoker>(resolve(code))(payload, bytes, *this, from); });
  }

  void dispatch_block(std::size_t, const std::byte* records, std::size_t record_bytes,
                      std::size_t count, int from, std::uint64_t code) override {
    // Code that this program does not have fails the whole block; the engine counts it.
    detail::any_function run = nullptr;
    const auto find = [&] { run = resolve(code); };
    guarded(0, from, find, count);
    if (run != nullptr)
      reinterpret_cast<block_invoker>(run)(records, detail::padded(record_bytes), count, *this,
                                           from);
  }

 private:
  using block_invoker = void (*)(const std::byte*, std::size_t, std::size_t, lambda_actor&, int);
  using data_invoker = void (*)(const std::byte*, std::size_t, lambda_actor&, int);

  template <class F>
  static void check_captures() {
    static_assert(std::is_trivially_copyable_v<F>,
                  "troupe::pgas::lambda_actor::send: the lambda must capture only trivially "
                  "copyable values (numbers, indices, small structs), since its captures are "
                  "copied to another process. Reach per-PE data through the State& parameter.");
  }

  template <class Invoker>
  static std::uint64_t code_of(Invoker function) {
    return detail::pack(detail::encode(reinterpret_cast<detail::any_function>(function)));
  }

  // Where the data starts in a record: after the captures, rounded up to T's alignment. Records
  // start 8-byte aligned and alignof(T) divides 8, so the elements can be read in place.
  template <class F, class T>
  static constexpr std::size_t data_offset() {
    return (sizeof(F) + alignof(T) - 1) / alignof(T) * alignof(T);
  }

  template <class F>
  static void invoke_block(const std::byte* records, std::size_t stride, std::size_t count,
                           lambda_actor& self, int from) {
    for (std::size_t index = 0; index < count; ++index)
      self.guarded(0, from, [&] { call<F>(records + index * stride, self, from); });
  }

  template <class F, class T>
  static void invoke_with_data(const std::byte* record, std::size_t bytes, lambda_actor& self,
                               int from) {
    constexpr std::size_t at = data_offset<F, T>();
    call<F>(record, self, from,
            std::span<const T>{reinterpret_cast<const T*>(record + at), (bytes - at) / sizeof(T)});
  }

  template <class F, class... Data>
  static void call(const std::byte* captures, lambda_actor& self, int from, Data... data) {
    // A trivially copyable object comes to life by copying its bytes into aligned storage.
    alignas(F) std::byte storage[sizeof(F)];
    std::memcpy(storage, captures, sizeof(F));
    F& function = *std::launder(reinterpret_cast<F*>(storage));
    if constexpr (std::is_invocable_v<F&, State&, Data..., context&>) {
      context here{self, from};
      function(*self.state_, data..., here);
    } else {
      function(*self.state_, data...);
    }
  }

  // The few lambda types an actor receives are looked up once each; decode() takes a lock and
  // searches the modules, too slow to do per message.
  detail::any_function resolve(std::uint64_t code) {
    for (const known& each : known_)
      if (each.code == code) return each.run;
    const detail::any_function run = detail::decode(detail::unpack(code));
    known_[next_known_] = {code, run};
    next_known_ = (next_known_ + 1) % known_.size();
    return run;
  }

  struct known {
    std::uint64_t code = 0;
    detail::any_function run = nullptr;
  };
  State* state_;
  std::array<known, 4> known_{};
  std::size_t next_known_ = 0;
};

}  // namespace troupe::pgas
