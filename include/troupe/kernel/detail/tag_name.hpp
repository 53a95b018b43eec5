#pragma once

#include <string>
#include <type_traits>
#include <typeinfo>

#include "troupe/core/message.hpp"  // detail::type_name
#include "troupe/device/opencl_type_name.hpp"
#include "troupe/kernel/signature.hpp"

// Names of signature tags, as the kernel's author wrote them, for error messages.

namespace troupe::kernel::detail {

/// The element type's name: its OpenCL C name where it has one.
template <class T>
std::string element_name() {
  const char* name = troupe::opencl_type_name<T>();
  return *name != '\0' ? name : troupe::detail::type_name(typeid(T));
}
/// "ref", "pinned" or "val".
template <class Mode>
const char* mode_name() {
  if constexpr (std::is_same_v<Mode, ref>) return "ref";
  if constexpr (std::is_same_v<Mode, pinned>) return "pinned";
  return "val";
}
/// Per signature tag, its name (see tag_name).
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
/// "in<float, ref>" and the like, for messages.
template <class Tag>
std::string tag_name() {
  return tag_namer<Tag>::get();
}

}  // namespace troupe::kernel::detail
