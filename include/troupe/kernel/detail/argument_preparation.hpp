#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "troupe/async/error.hpp"
#include "troupe/device/buffer.hpp"
#include "troupe/device/dependencies.hpp"
#include "troupe/device/host_buffer.hpp"
#include "troupe/device/local_memory.hpp"
#include "troupe/kernel/detail/device_slot.hpp"
#include "troupe/kernel/detail/kernel_actor_base.hpp"
#include "troupe/kernel/detail/pinned_block_pool.hpp"
#include "troupe/kernel/detail/request_memory.hpp"
#include "troupe/kernel/detail/signature_traits.hpp"
#include "troupe/kernel/detail/tag_name.hpp"
#include "troupe/kernel/mem_ref.hpp"
#include "troupe/kernel/request_shape.hpp"

// Argument preparation: per position of a kernel actor's signature, what one request's launch
// gets (device memory, local memory or a scalar) and what its results keep of it.

namespace troupe::kernel::detail {

/// Builds the error a request gets, naming the actor, the signature position and its tag.
error argument_error(const std::string& actor, std::size_t position, const std::string& tag,
                     const std::string& problem);

/// A global-memory position (in, out, in_out, scratch): the buffer the launch gets, its element
/// count for the results, and for a pinned output the page-locked block it is read into (taken
/// before the launch, so that a request that cannot have one fails before its kernel runs).
template <class T>
struct global_argument {
  buffer<T> memory;
  std::size_t count;
  pinned_block_pool::block landing{};
};
/// A scalar position (priv): the value the launch gets.
template <class T>
struct scalar_argument {
  T value;
};

/// What the launch gets of a prepared position.
template <class T>
const buffer<T>& launch_argument_of(const global_argument<T>& a) {
  return a.memory;
}
template <class T>
const local_memory<T>& launch_argument_of(const local_memory<T>& a) {
  return a;
}
template <class T>
const T& launch_argument_of(const scalar_argument<T>& a) {
  return a.value;
}

/// Fails the request (position P of `actor`) when `tag` expects another element count.
template <std::size_t P, class Tag>
void check_expected(const kernel_actor_base& actor, const Tag& tag, std::size_t count,
                    const request_shape& shape) {
  if (!tag.expected) return;
  const std::size_t expected = (*tag.expected)(shape);
  if (count != expected) {
    throw argument_error(actor.label(), P, tag_name<Tag>(),
                         "it has " + std::to_string(count) + " elements, expected " +
                             std::to_string(expected) + " (" + tag.expected->describe() + ")");
  }
}

/// A global-memory input from a host vector: written to fresh memory; the vector is kept in
/// `memory` until the write has read it.
template <std::size_t P, class Tag, class T>
global_argument<T> receive_input(const kernel_actor_base& actor, const Tag& tag,
                                 std::vector<T>& host, const request_shape& shape,
                                 device_slot& slot, request_memory& memory, dependencies& deps) {
  detail::check_expected<P>(actor, tag, host.size(), shape);
  if (host.empty()) {
    throw argument_error(actor.label(), P, tag_name<Tag>(), "the vector is empty");
  }
  auto kept = std::make_shared<std::vector<T>>(std::move(host));
  global_argument<T> argument{slot.dev.template allocate<T>(kept->size()), kept->size()};
  auto written = memory.queue.write(argument.memory, std::span<const T>{*kept}).share();
  deps.add(written);
  memory.inputs.push_back({kept, &typeid(std::vector<T>), kept->size()});
  memory.writes.push_back(std::move(written));
  return argument;
}

/// A global-memory input from pinned host memory: written by DMA from where it lies. The write
/// command holds the memory until it has read it, and the response waits for it, so the sender
/// may write to its handle again once the response has come.
template <std::size_t P, class Tag, class T>
global_argument<T> receive_input(const kernel_actor_base& actor, const Tag& tag,
                                 host_buffer<T>& host, const request_shape& shape,
                                 device_slot& slot, request_memory& memory, dependencies& deps) {
  detail::check_expected<P>(actor, tag, host.size(), shape);
  if (host.size() == 0 || host.data() == nullptr) {
    throw argument_error(actor.label(), P, tag_name<Tag>(), "the host_buffer is empty");
  }
  global_argument<T> argument{slot.dev.template allocate<T>(host.size()), host.size()};
  auto written = memory.queue.write(argument.memory, host).share();
  deps.add(written);
  memory.pinned_inputs_read = std::move(written);  // the last on the in-order queue ends last
  return argument;
}

/// A global-memory input from a mem_ref: used in place, once it is ready, if it is on this
/// request's device with the rights the kernel needs.
template <std::size_t P, class Tag, class T>
global_argument<T> receive_input(const kernel_actor_base& actor, const Tag& tag, mem_ref<T>& data,
                                 const request_shape& shape, device_slot& slot, request_memory&,
                                 dependencies& deps) {
  if (!data.valid()) {
    throw argument_error(actor.label(), P, tag_name<Tag>(), "the mem_ref is empty");
  }
  detail::check_expected<P>(actor, tag, data.size(), shape);
  if (!(data.device() == slot.dev)) {
    throw argument_error(actor.label(), P, tag_name<Tag>(),
                         "the mem_ref is on " + data.device().name() + ", this request runs on " +
                             slot.dev.name() + "; move it there first with mem_ref::copy_to");
  }
  constexpr bool writes = is_in_out_v<Tag>;
  if (data.rights() == access::write_only || (writes && data.rights() == access::read_only)) {
    throw argument_error(
        actor.label(), P, tag_name<Tag>(),
        std::string{"the mem_ref is "} + std::string{to_string(data.rights())} +
            (writes ? ", and the kernel reads and writes it" : ", and the kernel reads it"));
  }
  deps.add(data.ready());
  return global_argument<T>{data.memory(), data.size()};
}

/// Position P (of tag `tag`, its input, if any, at index I of `inputs`): what the launch gets.
template <std::size_t P, std::size_t I, class Tag, class Inputs>
auto prepare_launch_argument(const kernel_actor_base& actor, const Tag& tag, Inputs& inputs,
                             const request_shape& shape, device_slot& slot, request_memory& memory,
                             dependencies& deps) {
  if constexpr (!std::is_same_v<typename tag_traits<Tag>::input, none>) {
    auto& input = std::get<I>(inputs);
    if constexpr (is_priv_v<Tag>) {
      return scalar_argument<std::remove_cvref_t<decltype(input)>>{input};
    } else {
      return detail::receive_input<P>(actor, tag, input, shape, slot, memory, deps);
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
      throw argument_error(actor.label(), P, tag_name<Tag>(),
                           "its size (" + tag.size.describe() + ") is 0 elements");
    }
    return global_argument<T>{slot.dev.template allocate<T>(count), count};
  }
}

/// Position P (of tag `tag`, its input, if any, at index I of `inputs`): what the launch gets,
/// with a block of the slot's pool for a pinned output.
template <std::size_t P, std::size_t I, class Tag, class Inputs>
auto prepare_argument(const kernel_actor_base& actor, const Tag& tag, Inputs& inputs,
                      const request_shape& shape, device_slot& slot, request_memory& memory,
                      dependencies& deps) {
  auto argument = prepare_launch_argument<P, I>(actor, tag, inputs, shape, slot, memory, deps);
  if constexpr (is_host_buffer_v<typename tag_traits<Tag>::output>) {
    using T = typename tag_traits<Tag>::output::value_type;
    argument.landing = slot.pinned_outputs.take(slot.dev, argument.count * sizeof(T));
  }
  return argument;
}

/// Every position of the signature `tags`, in order, for the request of `inputs` on `slot`:
/// the writes of host inputs are enqueued on `memory.queue` and added to `deps`, as are the
/// mem_ref inputs' readiness. Throws argument_error for a bad argument.
template <class... Tags, class Inputs>
auto prepare_arguments(const kernel_actor_base& actor, const std::tuple<Tags...>& tags,
                       Inputs& inputs, const request_shape& shape, device_slot& slot,
                       request_memory& memory, dependencies& deps) {
  return [&]<std::size_t... Ps>(std::index_sequence<Ps...>) {
    return std::tuple{prepare_argument<Ps, input_indices<Tags...>()[Ps]>(
        actor, std::get<Ps>(tags), inputs, shape, slot, memory, deps)...};
  }
  (std::index_sequence_for<Tags...>{});
}

}  // namespace troupe::kernel::detail
