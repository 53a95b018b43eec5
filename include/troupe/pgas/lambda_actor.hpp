#pragma once

#include <array>
#include <concepts>
#include <cstring>
#include <new>
#include <type_traits>

#include "troupe/async/error.hpp"
#include "troupe/pgas/detail/code_address.hpp"
#include "troupe/pgas/detail/mailbox_set.hpp"
#include "troupe/pgas/world.hpp"

namespace troupe::pgas {

/// The lambda form of an actor: send(pe, [=](State& s) { ... }) runs the lambda on PE `pe`,
/// against that PE's `State`. The captured values are shipped; the code is not, since every PE
/// runs the same program. Aggregation, ordering and termination are those of selector.
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
    /// Sends another lambda, from inside a handler.
    template <class F>
    void send(int pe, F function) {
      owner_->send(pe, std::move(function));
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
    static_assert(std::is_trivially_copyable_v<F>,
                  "troupe::pgas::lambda_actor::send: the lambda must capture only trivially "
                  "copyable values (numbers, indices, small structs), since its captures are "
                  "copied to another process. Reach per-PE data through the State& parameter.");
    static_assert(std::is_invocable_v<F&, State&> || std::is_invocable_v<F&, State&, context&>,
                  "troupe::pgas::lambda_actor::send: the lambda must be callable as f(State&) "
                  "or f(State&, lambda_actor<State>::context&)");
    // The code's address travels once per block of lambdas of one type, the captures per call.
    static const std::uint64_t code =
        detail::pack(detail::encode(reinterpret_cast<detail::any_function>(&invoke<F>)));
    std::memcpy(reserve("send", 0, pe, sizeof(F), false, code), &function, sizeof(F));
  }

  /// No more lambdas from this PE's code outside the handlers.
  void done() { mark_roots_done(); }
  /// Lets this PE's lambdas run; sends partial buffers when there is nothing to receive.
  void yield() { yield_now(); }
  /// Blocks, running lambdas, until the actor has terminated on every PE.
  void wait() { wait_terminated(); }
  /// Completes once the actor has terminated everywhere (see selector::finished).
  future<void> finished() { return finished_future(); }

  void dispatch(std::size_t, const std::byte* payload, std::size_t, int from,
                std::uint64_t code) override {
    resolve(code)(payload, *this, from);
  }

  void dispatch_block(std::size_t, const std::byte* records, std::size_t record_bytes,
                      std::size_t count, int from, std::uint64_t code) override {
    const invoker run = resolve(code);
    const std::size_t stride = detail::padded(record_bytes);
    for (std::size_t index = 0; index < count; ++index) run(records + index * stride, *this, from);
  }

 private:
  template <class F>
  static void invoke(const std::byte* captures, lambda_actor& self, int from) {
    // A trivially copyable object comes to life by copying its bytes into aligned storage.
    alignas(F) std::byte storage[sizeof(F)];
    std::memcpy(storage, captures, sizeof(F));
    F& function = *std::launder(reinterpret_cast<F*>(storage));
    if constexpr (std::is_invocable_v<F&, State&, context&>) {
      context here{self, from};
      function(*self.state_, here);
    } else {
      function(*self.state_);
    }
  }
  using invoker = void (*)(const std::byte*, lambda_actor&, int);

  // The few lambda types an actor receives are looked up once each; decode() takes a lock and
  // searches the modules, too slow to do per message.
  invoker resolve(std::uint64_t code) {
    for (const known& each : known_)
      if (each.code == code) return each.run;
    const auto run = reinterpret_cast<invoker>(detail::decode(detail::unpack(code)));
    known_[next_known_] = {code, run};
    next_known_ = (next_known_ + 1) % known_.size();
    return run;
  }

  struct known {
    std::uint64_t code = 0;
    invoker run = nullptr;
  };
  State* state_;
  std::array<known, 4> known_{};
  std::size_t next_known_ = 0;
};

}  // namespace troupe::pgas
