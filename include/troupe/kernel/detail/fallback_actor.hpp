#pragma once

#include <exception>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "troupe/core/actor_system.hpp"
#include "troupe/core/event_based_actor.hpp"
#include "troupe/kernel/detail/signature_traits.hpp"

namespace troupe::kernel::detail {

/// A kernel actor's stand-in where no device can run it: the same messages, mappings and
/// responses, with the work done by the C++ fallback function on the actor's own thread.
template <class InputMap, class OutputMap, class Fallback, class... Tags>
struct fallback_state {
  using input_list = inputs_of<Tags...>;
  using input_tuple = typename as_tuple<input_list>::type;
  using output_tuple = typename as_tuple<outputs_of<Tags...>>::type;
  static_assert(!(is_mem_ref_v<typename tag_traits<Tags>::input> || ...) &&
                    !(is_mem_ref_v<typename tag_traits<Tags>::output> || ...),
                "kernel::fallback: a signature with mem_refs needs a device; the fallback takes "
                "and returns host values only");
  static_assert(!(is_host_buffer_v<typename tag_traits<Tags>::input> || ...) &&
                    !(is_host_buffer_v<typename tag_traits<Tags>::output> || ...),
                "kernel::fallback: a signature with pinned positions needs a device (page-locked "
                "memory comes from one); the fallback takes and returns vectors");

  std::string label;
  InputMap input_map;
  OutputMap output_map;
  Fallback work;

  void answer(input_tuple inputs, response_promise& promise) {
    auto result = std::apply(work, std::move(inputs));
    if constexpr (std::is_same_v<decltype(result), output_tuple>) {
      deliver_outputs(output_map, std::move(result), promise);
    } else {
      static_assert(
          std::tuple_size_v<output_tuple> == 1 &&
              std::is_convertible_v<decltype(result), std::tuple_element_t<0, output_tuple>>,
          "kernel::fallback: the function returns the kernel's output, or a std::tuple "
          "of its outputs in signature order");
      deliver_outputs(output_map, output_tuple{std::move(result)}, promise);
    }
  }
};

template <class State, class List>
struct fallback_entry;
template <class State, class... Ms>
struct fallback_entry<State, type_list<Ms...>> {
  event_based_actor* self;
  std::shared_ptr<State> state;

  response_promise operator()(Ms... xs) const {
    auto promise = self->make_response_promise();
    try {
      if constexpr (std::is_same_v<decltype(state->input_map), no_mapping>) {
        state->answer(typename State::input_tuple{std::forward<Ms>(xs)...}, promise);
      } else {
        auto mapped = state->input_map(std::forward<Ms>(xs)...);
        if (!mapped) {
          promise.deliver(error{errc::invalid_argument,
                                state->label + ": the input mapping refused the message"});
        } else if constexpr (mapped_input<decltype(mapped),
                                          typename State::input_list>::with_range) {
          state->answer(drop_first(std::move(*mapped)), promise);  // no range on the host
        } else {
          state->answer(std::move(*mapped), promise);
        }
      }
    } catch (const error& e) {
      promise.deliver(e);
    } catch (const std::exception& e) {
      promise.deliver(error{errc::runtime_error, state->label + " (fallback): " + e.what()});
    }
    return promise;
  }
};

template <class InputMap, class OutputMap, class Fallback, class... Tags>
actor spawn_fallback(actor_system& system, std::string name, InputMap input_map,
                     OutputMap output_map, Fallback work) {
  using state_type = fallback_state<InputMap, OutputMap, Fallback, Tags...>;
  using received_types = typename received<InputMap, inputs_of<Tags...>>::type;
  auto state = std::make_shared<state_type>(state_type{
      "kernel actor '" + name + "'", std::move(input_map), std::move(output_map), std::move(work)});
  return system.spawn([state](event_based_actor* self) {
    return behavior{fallback_entry<state_type, received_types>{self, state}};
  });
}

}  // namespace troupe::kernel::detail
