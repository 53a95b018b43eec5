#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <tuple>
#include <vector>

#include "troupe/async/future.hpp"

namespace troupe {

namespace detail {

/// One continuation per input, owned by a frame that counts arrivals. The nodes live in one
/// array, so when_all over a million futures makes two allocations, not a million.
template <class Frame>
struct arrival_node final : continuation {
  Frame* frame = nullptr;
  std::size_t index = 0;
  void run() noexcept override { frame->arrive(index); }
};

template <class Future>
state_base* state_of(Future& f, const char* operation) {
  auto& s = future_access::state(f);
  if (!s)
    throw error(errc::no_state,
                std::string{operation} + ": an input future has no state (moved from or consumed)");
  return s.get();
}

/// Shared part of when_all over a sequence (vector or tuple) of futures.
template <class Sequence>
class when_all_frame {
 public:
  when_all_frame(Sequence inputs, std::size_t count)
      : inputs_(std::move(inputs)),
        nodes_(new arrival_node<when_all_frame>[count]),
        remaining_(count) {}

  /// Attaches to every input state. The frame may be gone when this returns.
  future<Sequence> start(const std::vector<state_base*>& states) {
    out_ = make_counted<shared_state<Sequence>>(states.front()->default_executor());
    for (auto* input : states)
      if (input->settled_by_promise()) out_->set_settled_by_promise();
    auto result = future_access::make<future<Sequence>>(out_);
    for (std::size_t i = 0; i < states.size(); ++i) {
      nodes_[i].frame = this;
      nodes_[i].index = i;
    }
    for (std::size_t i = 0; i < states.size(); ++i) states[i]->attach(&nodes_[i]);
    return result;
  }

  void arrive(std::size_t) noexcept {
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    auto out = std::move(out_);
    out->try_set_value(std::move(inputs_));
    delete this;
  }

 private:
  Sequence inputs_;
  std::unique_ptr<arrival_node<when_all_frame>[]> nodes_;
  std::atomic<std::size_t> remaining_;
  intrusive_ptr<shared_state<Sequence>> out_;
};

}  // namespace detail

/// A future that becomes ready when every input is ready (with or without error); it holds the
/// inputs, ready, in their original order.
template <class Future>
requires detail::is_future_v<Future> future<std::vector<Future>> when_all(
    std::vector<Future> inputs) {
  if (inputs.empty()) return make_ready_future(std::vector<Future>{});
  std::vector<detail::state_base*> states;
  states.reserve(inputs.size());
  for (auto& f : inputs) states.push_back(detail::state_of(f, "when_all"));
  auto* frame = new detail::when_all_frame<std::vector<Future>>(std::move(inputs), states.size());
  return frame->start(states);
}

/// when_all over an iterator range; the futures are moved out of it.
template <class Iterator>
requires detail::is_future_v<typename std::iterator_traits<Iterator>::value_type>
auto when_all(Iterator first, Iterator last) {
  using future_type = typename std::iterator_traits<Iterator>::value_type;
  return when_all(
      std::vector<future_type>(std::make_move_iterator(first), std::make_move_iterator(last)));
}

/// Variadic when_all: a future of a tuple of the ready inputs.
template <class... Futures>
requires(sizeof...(Futures) > 0 &&
         (detail::is_future_v<Futures> &&
          ...)) future<std::tuple<std::decay_t<Futures>...>> when_all(Futures&&... inputs) {
  using sequence = std::tuple<std::decay_t<Futures>...>;
  std::vector<detail::state_base*> states{detail::state_of(inputs, "when_all")...};
  auto* frame = new detail::when_all_frame<sequence>(sequence{std::move(inputs)...}, states.size());
  return frame->start(states);
}

}  // namespace troupe
