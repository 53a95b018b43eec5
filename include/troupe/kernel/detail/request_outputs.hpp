#pragma once

#include <cstddef>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include "troupe/async/future.hpp"
#include "troupe/device/dependencies.hpp"
#include "troupe/kernel/detail/request_memory.hpp"
#include "troupe/kernel/detail/signature_traits.hpp"
#include "troupe/kernel/mem_ref.hpp"

// Per position of a kernel actor's signature, what one request sends on once its launch is done:
// a mem_ref at once, or a host vector read back from the device.

namespace troupe::kernel::detail {

/// A mem_ref output: there at once, so it needs no future of its own.
template <class T>
struct ready_output {
  T value;
  bool is_ready() const noexcept { return true; }
  T get() { return std::move(value); }
};

/// An output as a future, to wait for several with when_all.
template <class T>
future<T> as_future(ready_output<T>&& output) {
  return make_ready_future(std::move(output.value));
}
template <class T>
future<T> as_future(future<T>&& output) {
  return std::move(output);
}

/// The response element of a position of tag `Tag`, prepared as `argument` (see
/// argument_preparation.hpp) for a launch that ends with `done`, as a tuple of zero or one
/// output. A val output is read into the storage of a host input of `memory` where one fits; a
/// pinned output into the block the argument took from its slot's pool.
template <class Tag, class Argument>
auto output_of(Argument& argument, const shared_future<void>& done, request_memory& memory) {
  using output = typename tag_traits<Tag>::output;
  if constexpr (std::is_same_v<output, none>) {
    return std::tuple<>{};
  } else if constexpr (is_mem_ref_v<output>) {
    return std::tuple{ready_output<output>{output{argument.memory, argument.count, done}}};
  } else if constexpr (is_host_buffer_v<output>) {
    output result{std::move(argument.landing), argument.count};
    auto read = memory.queue.read_into(argument.memory, result, after(done));
    return std::tuple{std::move(read).then(inline_execution, [result](future<void> f) {
      f.get();
      return result;
    })};
  } else {
    using T = typename output::value_type;
    const std::size_t count = argument.count;
    auto storage = memory.take<T>(count);
    if (!storage) return std::tuple{memory.queue.read(argument.memory, 0, count, after(done))};
    auto read =
        memory.queue.read_into(argument.memory, std::span<T>{storage->data(), count}, after(done));
    return std::tuple{std::move(read).then(inline_execution, [storage, count](future<void> f) {
      f.get();
      storage->resize(count);
      return std::move(*storage);
    })};
  }
}

}  // namespace troupe::kernel::detail
