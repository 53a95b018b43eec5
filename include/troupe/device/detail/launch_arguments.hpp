#pragma once

#include <cstring>
#include <type_traits>
#include <vector>

#include "troupe/device/buffer.hpp"
#include "troupe/device/detail/command.hpp"
#include "troupe/device/local_memory.hpp"
#include "troupe/device/nd_range.hpp"
#include "troupe/device/opencl_type_name.hpp"

namespace troupe::detail {

template <class T>
struct is_host_container : std::false_type {};
template <class T, class A>
struct is_host_container<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_host_container<host_buffer<T>> : std::true_type {};

/// Turns one argument of launch(...) into what the frontend checks and the backend passes.
template <class T>
void add_launch_argument(std::vector<launch_argument>& out, const buffer<T>& b) {
  launch_argument arg;
  arg.what = launch_argument::kind::buffer;
  arg.buffer = b.state();
  arg.size = sizeof(T);
  arg.type_name = troupe::opencl_type_name<T>();
  out.push_back(std::move(arg));
}

template <class T>
void add_launch_argument(std::vector<launch_argument>& out, const local_memory<T>& l) {
  launch_argument arg;
  arg.what = launch_argument::kind::local;
  arg.size = l.count * sizeof(T);
  arg.type_name = troupe::opencl_type_name<T>();
  out.push_back(std::move(arg));
}

template <class T>
void add_launch_argument(std::vector<launch_argument>& out, const T& value) {
  static_assert(!is_host_container<T>::value,
                "launch: kernels take device memory; copy host data into a buffer<T> first");
  static_assert(!std::is_pointer_v<T>,
                "launch: a host pointer means nothing on the device; pass a buffer<T>");
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 16,
                "launch: a by-value kernel argument must be trivially copyable and at most 16 "
                "bytes");
  launch_argument arg;
  arg.what = launch_argument::kind::scalar;
  std::memcpy(arg.scalar.data(), &value, sizeof(T));
  arg.size = sizeof(T);
  arg.type_name = troupe::opencl_type_name<T>();
  out.push_back(std::move(arg));
}

template <class... Args>
std::vector<launch_argument> pack_launch_arguments(const Args&... args) {
  std::vector<launch_argument> out;
  out.reserve(sizeof...(Args));
  (add_launch_argument(out, args), ...);
  return out;
}

/// The normalised index space of an nd_range or cuda_grid; throws troupe::error
/// (errc::invalid_argument) when malformed.
launch_shape make_launch_shape(const nd_range& range);
launch_shape make_launch_shape(const cuda_grid& grid);

}  // namespace troupe::detail
