#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "troupe/async/future.hpp"
#include "troupe/async/when_all.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/core/behavior.hpp"
#include "troupe/core/response_promise.hpp"
#include "troupe/device/dependencies.hpp"
#include "troupe/device/device.hpp"
#include "troupe/device/device_queue.hpp"
#include "troupe/device/nd_range.hpp"
#include "troupe/kernel/detail/argument_preparation.hpp"
#include "troupe/kernel/detail/device_slot.hpp"
#include "troupe/kernel/detail/kernel_actor_base.hpp"
#include "troupe/kernel/detail/request_memory.hpp"
#include "troupe/kernel/detail/request_outputs.hpp"
#include "troupe/kernel/detail/signature_traits.hpp"
#include "troupe/support/stage_trace.hpp"

namespace troupe::kernel::detail {

namespace trace = troupe::detail::stage_trace;

/// A kernel actor: each request becomes transfers and a launch on the actor's own in-order
/// queue of the chosen device, answered with the outputs (host vectors once read back, or
/// mem_refs at once). Nothing blocks: the response is delivered from the completion path.
template <class InputMap, class OutputMap, class... Tags>
class kernel_actor final : public kernel_actor_base {
 public:
  // -- member types ---------------------------------------------------------

  using input_types = inputs_of<Tags...>;
  using output_types = outputs_of<Tags...>;
  using input_tuple = typename as_tuple<input_types>::type;
  using output_tuple = typename as_tuple<output_types>::type;
  using received_types = typename received<InputMap, input_types>::type;

  // -- constructors ---------------------------------------------------------

  /// An actor for `kernel_name` on `devices` (programs in the same order) with the signature
  /// `tags`; a request without an nd_range of its own (from map_input) runs on `default_range`.
  kernel_actor(actor_system& system, std::string kernel_name, device_set devices,
               std::vector<shared_future<program>> programs, nd_range default_range,
               InputMap input_map, OutputMap output_map, std::tuple<Tags...> tags)
      : kernel_actor_base(system, std::move(kernel_name), std::move(devices), std::move(programs)),
        default_range_(std::move(default_range)),
        input_map_(std::move(input_map)),
        output_map_(std::move(output_map)),
        tags_(std::move(tags)) {}

  // -- operations -----------------------------------------------------------

  /// Requests of the received types, and the note that the programs are ready.
  behavior make_behavior() override {
    watch_programs();
    return behavior{entry<received_types>{this}, [this](programs_ready) { on_programs_ready(); }};
  }

 private:
  /// The handler: its parameters are the received types, so a message of other types is
  /// refused by the actor as an unexpected message.
  template <class List>
  struct entry;
  template <class... Ms>
  struct entry<type_list<Ms...>> {
    kernel_actor* self;
    response_promise operator()(Ms... xs) const {
      auto promise = self->make_response_promise();
      self->accept(promise, std::forward<Ms>(xs)...);
      return promise;
    }
  };

  template <class... Ms>
  void accept(response_promise promise, Ms&&... xs) {
    try {
      if constexpr (std::is_same_v<InputMap, no_mapping>) {
        submit(input_tuple{std::forward<Ms>(xs)...}, default_range_, std::move(promise));
      } else {
        auto mapped = input_map_(std::forward<Ms>(xs)...);
        using traits = mapped_input<decltype(mapped), input_types>;
        static_assert(traits::valid,
                      "map_input: the function must return std::optional<std::tuple<inputs...>> "
                      "or std::optional<std::tuple<nd_range, inputs...>>, inputs being the "
                      "kernel's input types in signature order");
        if (!mapped) {
          promise.deliver(
              error{errc::invalid_argument, label() + ": the input mapping refused the message"});
          return;
        }
        if constexpr (traits::with_range) {
          auto range = std::get<0>(*mapped);
          submit(drop_first(std::move(*mapped)), range, std::move(promise));
        } else {
          submit(std::move(*mapped), default_range_, std::move(promise));
        }
      }
    } catch (const error& e) {
      promise.deliver(e);
    } catch (const std::exception& e) {
      promise.deliver(error{errc::runtime_error, label() + ": " + e.what()});
    }
  }

  void submit(input_tuple inputs, nd_range range, response_promise promise) {
    if (runs_now()) {  // the common case, without packing the request into a function
      run_delivering_errors(inputs, range, promise);
      return;
    }
    wait_for_programs([this, inputs = std::make_shared<input_tuple>(std::move(inputs)), range,
                       promise]() mutable { run_delivering_errors(*inputs, range, promise); });
  }

  void run_delivering_errors(input_tuple& inputs, const nd_range& range,
                             response_promise& promise) {
    try {
      run(inputs, range, promise);
    } catch (const error& e) {
      promise.deliver(e);
    } catch (const std::exception& e) {
      promise.deliver(error{errc::runtime_error, label() + ": " + e.what()});
    }
  }

  // -- one request ------------------------------------------------------------

  static constexpr auto input_index = input_indices<Tags...>();
  static constexpr std::size_t positions = sizeof...(Tags);

  /// The device of the first mem_ref input, if any: the request runs there.
  static std::optional<device> home_of(const input_tuple& inputs) {
    std::optional<device> found;
    [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      (
          [&] {
            if constexpr (is_mem_ref_v<std::tuple_element_t<Is, input_tuple>>) {
              if (!found && std::get<Is>(inputs).valid()) found = std::get<Is>(inputs).device();
            }
          }(),
          ...);
    }
    (std::make_index_sequence<std::tuple_size_v<input_tuple>>{});
    return found;
  }

  void run(input_tuple& inputs, const nd_range& range, response_promise& promise) {
    trace::record(trace::point::request_run);
    if (range.problem() != nullptr) {
      throw error{errc::invalid_argument,
                  label() + ": the nd_range is malformed: " + std::string{range.problem()}};
    }
    request_shape shape{range, std::vector<std::size_t>(positions, 0)};
    [&]<std::size_t... Ps>(std::index_sequence<Ps...>) {
      (record_size<Ps>(inputs, shape), ...);
    }
    (std::make_index_sequence<positions>{});
    const std::size_t items = shape.work_items();
    device_slot& slot = pick_slot(home_of(inputs), items);

    const auto started = measures_speed() ? std::chrono::steady_clock::now()
                                          : std::chrono::steady_clock::time_point{};
    request_memory memory;
    memory.queue = queue_for(inputs, slot);
    std::optional<decltype(prepare_arguments(*this, tags_, inputs, shape, slot, memory,
                                             std::declval<dependencies&>()))>
        arguments;
    shared_future<void> done;
    try {
      // A compile error ends the request here, before anything is enqueued.
      const program& prog = slot.prog.get();
      dependencies deps;
      // In order with this actor's requests before, on whichever queue they ran; their errors
      // are theirs, not this request's.
      if (slot.last_launch.valid()) deps.order_after(slot.last_launch);
      // Per position, what the launch gets (a buffer, local memory or a scalar).
      arguments.emplace(prepare_arguments(*this, tags_, inputs, shape, slot, memory, deps));
      trace::record(trace::point::launch_called);
      future<void> launched = std::apply(
          [&](auto&... args) {
            return memory.queue.launch(prog, kernel_name_, range, deps,
                                       detail::launch_argument_of(args)...);
          },
          *arguments);
      if (launched.has_exception()) launched.get();  // throws the launch's error
      done = std::move(launched).share();
      slot.last_launch = done;
    } catch (...) {
      forget(slot, items);
      // Writes already enqueued read the host inputs kept here: those stay until they are done.
      if (!memory.writes.empty()) {
        auto kept =
            std::make_shared<std::vector<request_memory::host_input>>(std::move(memory.inputs));
        for (const auto& written : memory.writes) {
          written.then(inline_execution, [kept](const shared_future<void>&) {});
        }
      }
      throw;
    }

    // The host inputs stay until their writes are done: the last one, on the in-order queue,
    // ends after the others. (Waiting for the launch instead would give it an event it does not
    // need otherwise.) A throughput-balancing actor (kept alive by its handle) learns how long
    // the request took. The continuations hold copies of the inputs' handles: val outputs may
    // still take their storage below.
    if (measures_speed()) {
      done.then(inline_execution,
                [kept = memory.inputs, slot = &slot, actor = self(), items, started,
                 this](const shared_future<void>&) { record(*slot, items, started); });
    } else if (!memory.writes.empty()) {
      memory.writes.back().then(inline_execution,
                                [kept = memory.inputs](const shared_future<void>&) {});
    }

    auto results = [&]<std::size_t... Ps>(std::index_sequence<Ps...>) {
      return std::tuple_cat(detail::output_of<std::tuple_element_t<Ps, std::tuple<Tags...>>>(
          std::get<Ps>(*arguments), done, memory)...);
    }
    (std::make_index_sequence<positions>{});
    trace::record(trace::point::responding);
    respond(std::move(results), promise, memory.pinned_inputs_read);
    trace::record(trace::point::responded);
  }

  /// The queue a request runs on: the actor's own, unless a mem_ref input is being produced by
  /// the last command of another queue of the same device. Then the request follows it there,
  /// as a kernel enqueued after another on one stream would, instead of waiting across queues
  /// (on an H200, those waits took 15 to 45 % of a 20-stage pipeline's time).
  static device_queue queue_for(const input_tuple& inputs, const device_slot& slot) {
    device_queue found;
    [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      (
          [&] {
            if constexpr (is_mem_ref_v<std::tuple_element_t<Is, input_tuple>>) {
              const auto& input = std::get<Is>(inputs);
              if (found.valid() || !input.valid()) return;
              auto producer = device_queue::ending_with(input.ready());
              if (producer.valid() && producer.device() == slot.dev) found = std::move(producer);
            }
          }(),
          ...);
    }
    (std::make_index_sequence<std::tuple_size_v<input_tuple>>{});
    return found.valid() ? found : slot.queue;
  }

  template <std::size_t P>
  static void record_size(const input_tuple& inputs, request_shape& shape) {
    using tag = std::tuple_element_t<P, std::tuple<Tags...>>;
    using input = typename tag_traits<tag>::input;
    if constexpr (is_vector_v<input> || is_mem_ref_v<input> || is_host_buffer_v<input>) {
      shape.sizes[P] = std::get<input_index[P]>(inputs).size();
    }
  }

  /// Delivers the outputs once every one is there: at once when all are (mem_refs), else from
  /// the completion path. Outputs that are there at once wait for `inputs_read` (pinned inputs
  /// still being written); a host output is read after the launch, and so after them.
  template <class... Outputs>
  void respond(std::tuple<Outputs...> results, response_promise& promise,
               const shared_future<void>& inputs_read) {
    const bool all_ready = std::apply([](auto&... r) { return (r.is_ready() && ...); }, results);
    if (all_ready && inputs_read.valid() && !inputs_read.is_ready()) {
      auto kept = std::make_shared<std::tuple<Outputs...>>(std::move(results));
      inputs_read.then(inline_execution,
                       [this, actor = self(), kept, promise](const shared_future<void>&) mutable {
                         deliver_ready(*kept, promise);
                       });
      return;
    }
    if constexpr (sizeof...(Outputs) > 0) {
      if (!all_ready) {
        // The handle keeps the actor (its mapping) alive until the outputs are there.
        std::apply([](auto&&... r) { return when_all(detail::as_future(std::move(r))...); },
                   std::move(results))
            .then(inline_execution,
                  [this, actor = self(), promise](
                      future<std::tuple<decltype(detail::as_future(std::declval<Outputs>()))...>>
                          all) mutable {
                    auto ready = all.get();
                    deliver_ready(ready, promise);
                  });
        return;
      }
    }
    deliver_ready(results, promise);
  }

  /// Delivers outputs that are all there (values, or the errors of failed reads).
  template <class... Ready>
  void deliver_ready(std::tuple<Ready...>& ready, response_promise& promise) {
    try {
      auto values = std::apply([](auto&... r) { return std::tuple{r.get()...}; }, ready);
      deliver_outputs(output_map_, std::move(values), promise);
    } catch (const error& e) {
      promise.deliver(error{e.code(), label() + ": " + e.what()});
    } catch (const std::exception& e) {
      promise.deliver(error{errc::runtime_error, label() + ": " + e.what()});
    }
  }

  nd_range default_range_;
  InputMap input_map_;
  OutputMap output_map_;
  std::tuple<Tags...> tags_;
};

}  // namespace troupe::kernel::detail
