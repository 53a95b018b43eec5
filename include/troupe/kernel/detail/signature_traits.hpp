#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "troupe/core/behavior.hpp"
#include "troupe/device/host_buffer.hpp"
#include "troupe/device/nd_range.hpp"
#include "troupe/kernel/kernel_options.hpp"
#include "troupe/kernel/mem_ref.hpp"
#include "troupe/kernel/signature.hpp"

namespace troupe::kernel::detail {

using troupe::detail::type_list;

/// Marks a position that takes nothing from the message, or sends nothing on.
struct none {};

/// The host-side type of a global-memory position of mode `Mode` (see signature.hpp).
template <class T, class Mode>
using global_type = std::conditional_t<
    std::is_same_v<Mode, ref>, mem_ref<T>,
    std::conditional_t<std::is_same_v<Mode, pinned>, host_buffer<T>, std::vector<T>>>;

/// Per signature tag: what it takes from the message (`input`) and what it sends on (`output`).
template <class Tag>
struct tag_traits {
  static constexpr bool is_tag = false;
};
template <class T, class In>
struct tag_traits<in<T, In>> {
  static constexpr bool is_tag = true;
  using input = global_type<T, In>;
  using output = none;
};
template <class T, class Out>
struct tag_traits<out<T, Out>> {
  static constexpr bool is_tag = true;
  using input = none;
  using output = global_type<T, Out>;
};
template <class T, class In, class Out>
struct tag_traits<in_out<T, In, Out>> {
  static constexpr bool is_tag = true;
  using input = global_type<T, In>;
  using output = global_type<T, Out>;
};
template <class T>
struct tag_traits<local<T>> {
  static constexpr bool is_tag = true;
  using input = none;
  using output = none;
};
template <class T, class From>
struct tag_traits<priv<T, From>> {
  static constexpr bool is_tag = true;
  using input = std::conditional_t<std::is_same_v<From, val>, T, none>;
  using output = none;
};
template <class T>
struct tag_traits<scratch<T>> {
  static constexpr bool is_tag = true;
  using input = none;
  using output = none;
};

template <class T>
inline constexpr bool is_tag_v = tag_traits<std::remove_cvref_t<T>>::is_tag;

// -- kinds of tags and values -----------------------------------------------------

template <class T>
inline constexpr bool is_mem_ref_v = false;
template <class T>
inline constexpr bool is_mem_ref_v<mem_ref<T>> = true;
template <class T>
inline constexpr bool is_host_buffer_v = false;
template <class T>
inline constexpr bool is_host_buffer_v<host_buffer<T>> = true;
template <class T>
inline constexpr bool is_vector_v = false;
template <class T>
inline constexpr bool is_vector_v<std::vector<T>> = true;
template <class Tag>
inline constexpr bool is_priv_v = false;
template <class T, class From>
inline constexpr bool is_priv_v<priv<T, From>> = true;
template <class Tag>
inline constexpr bool is_local_v = false;
template <class T>
inline constexpr bool is_local_v<local<T>> = true;
template <class Tag>
inline constexpr bool is_in_out_v = false;
template <class T, class In, class Out>
inline constexpr bool is_in_out_v<in_out<T, In, Out>> = true;

/// The element type of a tag that makes device memory (out, scratch) or local memory.
template <class Tag>
struct element_of;
template <class T, class Out>
struct element_of<out<T, Out>> {
  using type = T;
};
template <class T>
struct element_of<scratch<T>> {
  using type = T;
};
template <class T>
struct element_of<local<T>> {
  using type = T;
};

// -- type lists without `none` -------------------------------------------------

template <class... Lists>
struct concat;
template <>
struct concat<> {
  using type = type_list<>;
};
template <class... Ts>
struct concat<type_list<Ts...>> {
  using type = type_list<Ts...>;
};
template <class... As, class... Bs, class... Rest>
struct concat<type_list<As...>, type_list<Bs...>, Rest...> {
  using type = typename concat<type_list<As..., Bs...>, Rest...>::type;
};

template <class T>
using keep = std::conditional_t<std::is_same_v<T, none>, type_list<>, type_list<T>>;

template <class... Tags>
using inputs_of = typename concat<keep<typename tag_traits<Tags>::input>...>::type;
template <class... Tags>
using outputs_of = typename concat<keep<typename tag_traits<Tags>::output>...>::type;

template <class List>
struct as_tuple;
template <class... Ts>
struct as_tuple<type_list<Ts...>> {
  using type = std::tuple<Ts...>;
};

/// For each position of the signature, the index of its element in the input tuple, counting
/// only the positions that take one.
template <class... Tags>
constexpr auto input_indices() {
  std::array<std::size_t, sizeof...(Tags)> indices{};
  std::size_t next = 0, position = 0;
  ((indices[position++] = std::is_same_v<typename tag_traits<Tags>::input, none> ? next : next++),
   ...);
  return indices;
}

// -- mappings --------------------------------------------------------------------

struct no_mapping {};

template <class T>
struct is_input_mapping : std::false_type {};
template <class F>
struct is_input_mapping<input_mapping<F>> : std::true_type {};
template <class T>
struct is_output_mapping : std::false_type {};
template <class F>
struct is_output_mapping<output_mapping<F>> : std::true_type {};
template <class T>
struct is_fallback : std::false_type {};
template <class F>
struct is_fallback<fallback_function<F>> : std::true_type {};

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

/// What an input mapping returns: optional<tuple<inputs...>>, maybe with an nd_range first.
template <class Result, class Inputs>
struct mapped_input {
  static constexpr bool valid = false;
};
template <class... Ts, class... Inputs>
struct mapped_input<std::optional<std::tuple<Ts...>>, type_list<Inputs...>> {
  static constexpr bool with_range =
      std::is_same_v<type_list<Ts...>, type_list<nd_range, Inputs...>>;
  static constexpr bool valid =
      with_range || std::is_same_v<type_list<Ts...>, type_list<Inputs...>>;
};

/// The message types a kernel actor accepts: its inputs, or its input mapping's parameters.
template <class InputMap, class Inputs>
struct received {
  using type = typename troupe::detail::callable_traits<InputMap>::args;
};
template <class Inputs>
struct received<no_mapping, Inputs> {
  using type = Inputs;
};

/// The tuple without its first element (an input mapping's nd_range).
template <class First, class... Rest>
std::tuple<Rest...> drop_first(std::tuple<First, Rest...>&& all) {
  return std::apply([](First&&, Rest&&... rest) { return std::tuple<Rest...>{std::move(rest)...}; },
                    std::move(all));
}

/// Answers with the outputs, through the output mapping if there is one.
template <class OutputMap, class... Outputs>
void deliver_outputs(OutputMap& output_map, std::tuple<Outputs...> values,
                     response_promise& promise) {
  if constexpr (std::is_same_v<OutputMap, no_mapping>) {
    std::apply([&](auto&... v) { promise.deliver(std::move(v)...); }, values);
  } else {
    auto response = std::apply([&](auto&... v) { return output_map(std::move(v)...); }, values);
    using R = decltype(response);
    if constexpr (is_optional<R>::value) {
      if (response) promise.deliver(std::move(*response));
    } else if constexpr (std::is_same_v<R, message>) {
      promise.deliver_message(std::move(response));
    } else {
      promise.deliver(std::move(response));
    }
  }
}

}  // namespace troupe::kernel::detail
