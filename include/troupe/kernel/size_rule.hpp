#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "troupe/kernel/request_shape.hpp"

namespace troupe::kernel {

/// How many elements an output, a scratch buffer or local memory has, decided per request: by
/// default the number of work items; else a constant, or a function of the request_shape.
class size_rule {
 public:
  // -- constructors ---------------------------------------------------------

  /// The number of work items of the request.
  size_rule() = default;
  /// Always `count` elements.
  size_rule(std::size_t count) : constant_(count) {}  // NOLINT: out<float>{1024} reads well
  /// `rule(shape)` elements.
  template <class F>
  requires std::is_invocable_r_v<std::size_t, F&, const request_shape&> size_rule(F rule)
      : rule_(std::move(rule)) {}

  // -- operations -----------------------------------------------------------

  /// The element count for the request of `shape`.
  std::size_t operator()(const request_shape& shape) const {
    if (constant_) return *constant_;
    if (rule_) return rule_(shape);
    return shape.work_items();
  }

  /// "work items", "1024" or "a function of the request", for messages.
  std::string describe() const {
    if (constant_) return std::to_string(*constant_);
    return rule_ ? "a function of the request" : "the work items";
  }

 private:
  std::optional<std::size_t> constant_;
  std::function<std::size_t(const request_shape&)> rule_;
};

}  // namespace troupe::kernel
