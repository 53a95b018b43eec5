#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <typeinfo>
#include <utility>
#include <vector>

#include "troupe/async/when_all.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/core/event_based_actor.hpp"
#include "troupe/core/request.hpp"
#include "troupe/device/device.hpp"
#include "troupe/device/device_queue.hpp"
#include "troupe/device/local_memory.hpp"
#include "troupe/kernel/detail/device_slot.hpp"
#include "troupe/kernel/detail/signature_traits.hpp"
#include "troupe/support/stage_trace.hpp"

namespace troupe::kernel::detail {

namespace trace = troupe::detail::stage_trace;

/// Sent by a kernel actor to itself once its programs are compiled (or failed to).
struct programs_ready {};

/// What every kernel actor has, whatever its signature: its name, devices, programs and the
/// requests that wait for the programs. The signature-specific part is kernel_actor.
class kernel_actor_base : public event_based_actor {
 public:
  kernel_actor_base(actor_system& system, std::string kernel_name, device_set devices,
                    std::vector<shared_future<program>> programs);

  /// "kernel actor 'name'", for messages.
  std::string label() const;

 protected:
  /// Whether a request may run now: every program is ready and nothing waits before it.
  bool runs_now() const noexcept { return programs_ready_ && waiting_.empty(); }
  /// Keeps `work` (a request that may not run now) until every program is ready; the waiting
  /// requests then run in the order they arrived.
  void wait_for_programs(std::function<void()> work);
  /// Whether requests are placed by measured speed: throughput balancing over several devices.
  /// Only then are their work items and times recorded.
  bool measures_speed() const noexcept {
    return policy_ == balance::throughput && slots_.size() > 1;
  }
  /// The behavior's handler of programs_ready.
  void on_programs_ready();
  /// Watches the programs; call from make_behavior.
  void watch_programs();

  /// The device for a request of `work_items`: where its data is (`home`, if given; an error
  /// when this actor does not run there), else by the policy.
  device_slot& pick_slot(const std::optional<device>& home, std::size_t work_items);

  /// Takes back the work items of a request that failed before its launch.
  void forget(device_slot& slot, std::size_t work_items);
  /// Records that a request of `work_items`, enqueued at `started`, finished on `slot` now
  /// (any thread).
  void record(device_slot& slot, std::size_t work_items,
              std::chrono::steady_clock::time_point started);

  std::string kernel_name_;
  std::vector<device_slot> slots_;
  balance policy_;

 private:
  std::size_t next_slot_ = 0;
  std::mutex speed_mutex_;  // guards the slots' speed and backlog (see device_slot)
  bool programs_ready_ = false;
  std::deque<std::function<void()>> waiting_;
};

/// Builds the error a request gets, naming the actor and the signature position.
error argument_error(const std::string& actor, std::size_t position, const std::string& tag,
                     const std::string& problem);
/// "in<float, ref>" and the like, for messages.
template <class Tag>
std::string tag_name();

template <class T>
std::string element_name() {
  const char* name = troupe::detail::opencl_type_name<T>();
  return *name != '\0' ? name : troupe::detail::type_name(typeid(T));
}
template <class Mode>
const char* mode_name() {
  return std::is_same_v<Mode, ref> ? "ref" : "val";
}
template <class Tag>
struct tag_namer;
template <class T, class In>
struct tag_namer<in<T, In>> {
  static std::string get() { return "in<" + element_name<T>() + ", " + mode_name<In>() + ">"; }
};
template <class T, class Out>
struct tag_namer<out<T, Out>> {
  static std::string get() { return "out<" + element_name<T>() + ", " + mode_name<Out>() + ">"; }
};
template <class T, class In, class Out>
struct tag_namer<in_out<T, In, Out>> {
  static std::string get() {
    return "in_out<" + element_name<T>() + ", " + mode_name<In>() + ", " + mode_name<Out>() + ">";
  }
};
template <class T>
struct tag_namer<local<T>> {
  static std::string get() { return "local<" + element_name<T>() + ">"; }
};
template <class T, class From>
struct tag_namer<priv<T, From>> {
  static std::string get() { return "priv<" + element_name<T>() + ">"; }
};
template <class T>
struct tag_namer<scratch<T>> {
  static std::string get() { return "scratch<" + element_name<T>() + ">"; }
};
template <class Tag>
std::string tag_name() {
  return tag_namer<Tag>::get();
}

/// What one request holds: the queue it runs on, and host inputs kept until the launch has read
/// them.
struct request_memory {
  device_queue queue;
  /// A host input, kept until it is written to the device. A val output of the same type may take
  /// its storage: the output's read comes after the input's write on the in-order queue. A fresh
  /// vector would be allocated and zeroed first, which costs as much as the copy itself (a 4 MB
  /// memset for a 1000 x 1000 result).
  struct host_input {
    std::shared_ptr<void> vector;
    const std::type_info* type;
    std::size_t count;
    bool taken = false;
  };
  std::vector<host_input> inputs;
  std::vector<shared_future<void>> writes;  ///< the writes that read them

  /// An input vector of T with at least `count` elements, taken for an output; else null.
  template <class T>
  std::shared_ptr<std::vector<T>> take(std::size_t count) {
    for (auto& input : inputs) {
      if (!input.taken && *input.type == typeid(std::vector<T>) && input.count >= count) {
        input.taken = true;
        return std::static_pointer_cast<std::vector<T>>(input.vector);
      }
    }
    return nullptr;
  }
};

/// A kernel actor: each request becomes transfers and a launch on the actor's own in-order
/// queue of the chosen device, answered with the outputs (host vectors once read back, or
/// mem_refs at once). Nothing blocks: the response is delivered from the completion path.
template <class InputMap, class OutputMap, class... Tags>
class kernel_actor final : public kernel_actor_base {
 public:
  using input_types = inputs_of<Tags...>;
  using output_types = outputs_of<Tags...>;
  using input_tuple = typename as_tuple<input_types>::type;
  using output_tuple = typename as_tuple<output_types>::type;
  using received_types = typename received<InputMap, input_types>::type;

  kernel_actor(actor_system& system, std::string kernel_name, device_set devices,
               std::vector<shared_future<program>> programs, nd_range default_range,
               InputMap input_map, OutputMap output_map, std::tuple<Tags...> tags)
      : kernel_actor_base(system, std::move(kernel_name), std::move(devices), std::move(programs)),
        default_range_(std::move(default_range)),
        input_map_(std::move(input_map)),
        output_map_(std::move(output_map)),
        tags_(std::move(tags)) {}

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
    std::optional<decltype(prepare_all(inputs, shape, slot, memory, std::declval<dependencies&>()))>
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
      arguments.emplace(prepare_all(inputs, shape, slot, memory, deps));
      trace::record(trace::point::launch_called);
      future<void> launched = std::apply(
          [&](auto&... args) {
            return memory.queue.launch(prog, kernel_name_, range, deps,
                                       launch_argument_of(args)...);
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
      return std::tuple_cat(result<Ps>(std::get<Ps>(*arguments), done, memory)...);
    }
    (std::make_index_sequence<positions>{});
    trace::record(trace::point::responding);
    respond(std::move(results), promise);
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

  auto prepare_all(input_tuple& inputs, const request_shape& shape, device_slot& slot,
                   request_memory& memory, dependencies& deps) {
    return [&]<std::size_t... Ps>(std::index_sequence<Ps...>) {
      return std::tuple{prepare<Ps>(std::get<Ps>(tags_), inputs, shape, slot, memory, deps)...};
    }
    (std::make_index_sequence<positions>{});
  }

  template <std::size_t P>
  static void record_size(const input_tuple& inputs, request_shape& shape) {
    using tag = std::tuple_element_t<P, std::tuple<Tags...>>;
    using input = typename tag_traits<tag>::input;
    if constexpr (is_vector_v<input> || is_mem_ref_v<input>) {
      shape.sizes[P] = std::get<input_index[P]>(inputs).size();
    }
  }

  // What prepare() gives the launch for each kind of position, and what it keeps for results.
  template <class T>
  struct global_argument {
    buffer<T> memory;
    std::size_t count;
  };
  template <class T>
  struct scalar_argument {
    T value;
  };

  template <class T>
  static const buffer<T>& launch_argument_of(const global_argument<T>& a) {
    return a.memory;
  }
  template <class T>
  static const local_memory<T>& launch_argument_of(const local_memory<T>& a) {
    return a;
  }
  template <class T>
  static const T& launch_argument_of(const scalar_argument<T>& a) {
    return a.value;
  }

  template <std::size_t P, class Tag>
  auto prepare(const Tag& tag, input_tuple& inputs, const request_shape& shape, device_slot& slot,
               request_memory& memory, dependencies& deps) {
    if constexpr (!std::is_same_v<typename tag_traits<Tag>::input, none>) {
      auto& input = std::get<input_index[P]>(inputs);
      if constexpr (is_priv_v<Tag>) {
        return scalar_argument<std::remove_cvref_t<decltype(input)>>{input};
      } else {
        return receive<P>(tag, input, shape, slot, memory, deps);
      }
    } else if constexpr (is_priv_v<Tag>) {
      return scalar_argument<decltype(tag.value)>{tag.value};
    } else if constexpr (is_local_v<Tag>) {
      return local_memory<typename element_of<Tag>::type>{tag.size(shape)};
    } else {
      // out<T> and scratch<T>: fresh device memory.
      using T = typename element_of<Tag>::type;
      const std::size_t count = tag.size(shape);
      if (count == 0) {
        throw argument_error(label(), P, tag_name<Tag>(),
                             "its size (" + tag.size.describe() + ") is 0 elements");
      }
      return global_argument<T>{slot.dev.template allocate<T>(count), count};
    }
  }

  /// A global-memory input: a host vector written to fresh memory, or a mem_ref used in place.
  template <std::size_t P, class Tag, class T>
  global_argument<T> receive(const Tag& tag, std::vector<T>& host, const request_shape& shape,
                             device_slot& slot, request_memory& memory, dependencies& deps) {
    check_expected<P>(tag, host.size(), shape);
    if (host.empty()) {
      throw argument_error(label(), P, tag_name<Tag>(), "the vector is empty");
    }
    auto kept = std::make_shared<std::vector<T>>(std::move(host));
    global_argument<T> argument{slot.dev.template allocate<T>(kept->size()), kept->size()};
    auto written = memory.queue.write(argument.memory, std::span<const T>{*kept}).share();
    deps.add(written);
    memory.inputs.push_back({kept, &typeid(std::vector<T>), kept->size()});
    memory.writes.push_back(std::move(written));
    return argument;
  }
  template <std::size_t P, class Tag, class T>
  global_argument<T> receive(const Tag& tag, mem_ref<T>& data, const request_shape& shape,
                             device_slot& slot, request_memory&, dependencies& deps) {
    if (!data.valid()) throw argument_error(label(), P, tag_name<Tag>(), "the mem_ref is empty");
    check_expected<P>(tag, data.size(), shape);
    if (!(data.device() == slot.dev)) {
      throw argument_error(label(), P, tag_name<Tag>(),
                           "the mem_ref is on " + data.device().name() + ", this request runs on " +
                               slot.dev.name() + "; move it there first with mem_ref::copy_to");
    }
    constexpr bool writes = is_in_out_v<Tag>;
    if (data.rights() == access::write_only || (writes && data.rights() == access::read_only)) {
      throw argument_error(
          label(), P, tag_name<Tag>(),
          std::string{"the mem_ref is "} + std::string{to_string(data.rights())} +
              (writes ? ", and the kernel reads and writes it" : ", and the kernel reads it"));
    }
    deps.add(data.ready());
    return global_argument<T>{data.memory(), data.size()};
  }

  template <std::size_t P, class Tag>
  void check_expected(const Tag& tag, std::size_t count, const request_shape& shape) const {
    if (!tag.expected) return;
    const std::size_t expected = (*tag.expected)(shape);
    if (count != expected) {
      throw argument_error(label(), P, tag_name<Tag>(),
                           "it has " + std::to_string(count) + " elements, expected " +
                               std::to_string(expected) + " (" + tag.expected->describe() + ")");
    }
  }

  /// A mem_ref output: there at once, so it needs no future of its own.
  template <class T>
  struct ready_output {
    T value;
    bool is_ready() const noexcept { return true; }
    T get() { return std::move(value); }
  };
  template <class T>
  static future<T> as_future(ready_output<T>&& output) {
    return make_ready_future(std::move(output.value));
  }
  template <class T>
  static future<T> as_future(future<T>&& output) {
    return std::move(output);
  }

  /// The response element of position P, as a tuple of zero or one output.
  template <std::size_t P, class Argument>
  auto result(Argument& argument, const shared_future<void>& done, request_memory& memory) {
    using tag = std::tuple_element_t<P, std::tuple<Tags...>>;
    using output = typename tag_traits<tag>::output;
    if constexpr (std::is_same_v<output, none>) {
      return std::tuple<>{};
    } else if constexpr (is_mem_ref_v<output>) {
      return std::tuple{ready_output<output>{output{argument.memory, argument.count, done}}};
    } else {
      using T = typename output::value_type;
      const std::size_t count = argument.count;
      auto storage = memory.take<T>(count);
      if (!storage) return std::tuple{memory.queue.read(argument.memory, 0, count, after(done))};
      auto read = memory.queue.read_into(argument.memory, std::span<T>{storage->data(), count},
                                         after(done));
      return std::tuple{std::move(read).then(inline_execution, [storage, count](future<void> f) {
        f.get();
        storage->resize(count);
        return std::move(*storage);
      })};
    }
  }

  /// Delivers the outputs once every one is there: at once when all are (mem_refs), else from
  /// the completion path.
  template <class... Outputs>
  void respond(std::tuple<Outputs...> results, response_promise& promise) {
    const bool all_ready = std::apply([](auto&... r) { return (r.is_ready() && ...); }, results);
    if constexpr (sizeof...(Outputs) > 0) {
      if (!all_ready) {
        // The handle keeps the actor (its mapping) alive until the outputs are there.
        std::apply([](auto&&... r) { return when_all(as_future(std::move(r))...); },
                   std::move(results))
            .then(inline_execution,
                  [this, actor = self(),
                   promise](future<std::tuple<decltype(as_future(std::declval<Outputs>()))...>>
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
