#pragma once

#include <atomic>
#include <cstddef>
#include <limits>
#include <memory>
#include <tuple>
#include <vector>

#include "troupe/async/when_all.hpp"

namespace troupe {

/// The result of when_any: which input became ready first, and all inputs.
template <class Sequence>
struct when_any_result {
  std::size_t index = std::numeric_limits<std::size_t>::max();
  Sequence futures;
};

namespace detail {

template <class Sequence>
class when_any_frame {
 public:
  using result_type = when_any_result<Sequence>;

  when_any_frame(Sequence inputs, std::size_t count)
      : inputs_(std::move(inputs)),
        nodes_(new arrival_node<when_any_frame>[count]),
        pending_(count) {}

  future<result_type> start(const std::vector<state_base*>& states) {
    out_ = make_counted<shared_state<result_type>>(states.front()->default_executor());
    for (auto* input : states)
      if (input->settled_by_promise()) out_->set_settled_by_promise();
    auto result = future_access::make<future<result_type>>(out_);
    for (std::size_t i = 0; i < states.size(); ++i) {
      nodes_[i].frame = this;
      nodes_[i].index = i;
    }
    for (std::size_t i = 0; i < states.size(); ++i) states[i]->attach(&nodes_[i]);
    return result;
  }

  /// The first arrival publishes the result; the last one frees the frame.
  void arrive(std::size_t index) noexcept {
    if (!decided_.exchange(true, std::memory_order_acq_rel)) {
      auto out = std::move(out_);
      out->try_set_value(result_type{index, std::move(inputs_)});
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  Sequence inputs_;
  std::unique_ptr<arrival_node<when_any_frame>[]> nodes_;
  std::atomic<std::size_t> pending_;
  std::atomic<bool> decided_{false};
  intrusive_ptr<shared_state<result_type>> out_;
};

}  // namespace detail

/// A future that becomes ready as soon as one input is ready. An empty input gives a ready
/// result whose index is the largest size_t.
template <class Future>
requires detail::is_future_v<Future> future<when_any_result<std::vector<Future>>> when_any(
    std::vector<Future> inputs) {
  if (inputs.empty()) return make_ready_future(when_any_result<std::vector<Future>>{});
  std::vector<detail::state_base*> states;
  states.reserve(inputs.size());
  for (auto& f : inputs) states.push_back(detail::state_of(f, "when_any"));
  auto* frame = new detail::when_any_frame<std::vector<Future>>(std::move(inputs), states.size());
  return frame->start(states);
}

template <class Iterator>
requires detail::is_future_v<typename std::iterator_traits<Iterator>::value_type>
auto when_any(Iterator first, Iterator last) {
  using future_type = typename std::iterator_traits<Iterator>::value_type;
  return when_any(
      std::vector<future_type>(std::make_move_iterator(first), std::make_move_iterator(last)));
}

template <class... Futures>
requires(sizeof...(Futures) > 0 && (detail::is_future_v<Futures> && ...))
    future<when_any_result<std::tuple<std::decay_t<Futures>...>>> when_any(Futures&&... inputs) {
  using sequence = std::tuple<std::decay_t<Futures>...>;
  std::vector<detail::state_base*> states{detail::state_of(inputs, "when_any")...};
  auto* frame = new detail::when_any_frame<sequence>(sequence{std::move(inputs)...}, states.size());
  return frame->start(states);
}

}  // namespace troupe
