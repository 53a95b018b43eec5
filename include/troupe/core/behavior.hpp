#pragma once

#include <exception>
#include <tuple>
#include <type_traits>
#include <utility>

#include "troupe/async/future.hpp"
#include "troupe/core/message.hpp"
#include "troupe/core/response_promise.hpp"

namespace troupe {

namespace detail {

template <class... Ts>
struct type_list {};

template <class List>
struct type_list_info_of;
template <class... Ts>
struct type_list_info_of<type_list<Ts...>> {
  static const type_list_info& get() noexcept { return type_list_of<strip_t<Ts>...>; }
};

/// The parameter and result types of a non-generic callable.
template <class F>
struct callable_traits : callable_traits<decltype(&std::remove_reference_t<F>::operator())> {};
template <class C, class R, class... Args>
struct callable_traits<R (C::*)(Args...) const> {
  using result = R;
  using args = type_list<Args...>;
};
template <class C, class R, class... Args>
struct callable_traits<R (C::*)(Args...)> : callable_traits<R (C::*)(Args...) const> {};
template <class C, class R, class... Args>
struct callable_traits<R (C::*)(Args...) noexcept> : callable_traits<R (C::*)(Args...) const> {};
template <class C, class R, class... Args>
struct callable_traits<R (C::*)(Args...) const noexcept>
    : callable_traits<R (C::*)(Args...) const> {};
template <class R, class... Args>
struct callable_traits<R (*)(Args...)> {
  using result = R;
  using args = type_list<Args...>;
};
template <class R, class... Args>
struct callable_traits<R(Args...)> : callable_traits<R (*)(Args...)> {};

/// Hands element `index` of `msg` to a parameter of type `Arg`: by const reference without a
/// copy; by mutable reference after copy-on-write; by value moved out when the message is not
/// shared, copied otherwise.
template <class Arg>
decltype(auto) element_for(message& msg, std::size_t index) {
  using T = strip_t<Arg>;
  if constexpr (std::is_lvalue_reference_v<Arg> && std::is_const_v<std::remove_reference_t<Arg>>) {
    return *static_cast<const T*>(msg.at(index));
  } else if constexpr (std::is_lvalue_reference_v<Arg>) {
    return *static_cast<T*>(msg.mutable_at(index));
  } else if (msg.unique()) {
    return T(std::move(*static_cast<T*>(msg.mutable_at(index))));
  } else if constexpr (std::is_copy_constructible_v<T>) {
    return T(*static_cast<const T*>(msg.at(index)));
  } else {
    throw error(errc::invalid_argument, "handler takes a move-only " + type_name(typeid(T)) +
                                            " by value from a message that is shared");
    return T(std::move(*static_cast<T*>(msg.mutable_at(index))));
  }
}

/// If `msg` has exactly the parameter types of `f`, calls it and passes its result (or nothing,
/// for void) to `on_result`; returns whether it matched.
template <class F, class OnResult, class... Args>
bool try_invoke_with(F& f, message& msg, OnResult& on_result, type_list<Args...>) {
  if (!msg.match<Args...>()) return false;
  [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    using R = std::invoke_result_t<F&, Args...>;
    if constexpr (std::is_void_v<R>) {
      f(element_for<Args>(msg, Is)...);
      on_result();
    } else {
      on_result(f(element_for<Args>(msg, Is)...));
    }
  }
  (std::index_sequence_for<Args...>{});
  return true;
}

template <class F, class OnResult>
bool try_invoke(F& f, message& msg, OnResult& on_result) {
  return try_invoke_with(f, msg, on_result, typename callable_traits<F>::args{});
}

/// What a handler needs from the actor that runs it to answer the current message.
class response_context {
 public:
  virtual ~response_context() = default;
  /// Answers the current message (routed through composition stages, if any).
  virtual void reply(message result) = 0;
  /// Takes over answering the current message.
  virtual response_promise make_response_promise() = 0;
};

/// Turns a handler's result into the answer: a value answers with it; void answers with an
/// empty message (so request<void> completes); an error answers with the error; a future
/// answers when it is ready; delegated and response_promise leave the answer to others.
class result_sink {
 public:
  explicit result_sink(response_context& context) : context_(context) {}

  void operator()() { context_.reply(message{}); }

  template <class R>
  void operator()(R&& result) {
    using T = std::decay_t<R>;
    if constexpr (std::is_same_v<T, delegated> || std::is_same_v<T, response_promise>) {
      // Answered elsewhere.
    } else if constexpr (std::is_same_v<T, message>) {
      context_.reply(std::forward<R>(result));
    } else if constexpr (is_future_v<T>) {
      auto promise = context_.make_response_promise();
      std::forward<R>(result).then(inline_execution, [promise](T ready) mutable {
        try {
          if constexpr (std::is_void_v<typename T::value_type>) {
            ready.get();
            promise.deliver();
          } else if constexpr (std::is_same_v<typename T::value_type, message>) {
            promise.deliver_message(ready.get());  // the message is the answer, as above
          } else {
            promise.deliver(ready.get());
          }
        } catch (const error& e) {
          promise.deliver(e);
        } catch (const std::exception& e) {
          promise.deliver(error{errc::runtime_error, e.what()});
        }
      });
    } else {
      context_.reply(make_message(std::forward<R>(result)));
    }
  }

 private:
  response_context& context_;
};

}  // namespace detail

/// A set of message handlers. Each handler is a callable with fixed parameter types; a message
/// is given to the first handler whose parameter types equal the message's element types.
class behavior {
 public:
  // -- constructors ---------------------------------------------------------

  behavior() noexcept = default;

  template <class F, class... Fs>
  requires(!std::is_same_v<std::decay_t<F>, behavior>) behavior(F f, Fs... fs)
      : impl_(detail::make_counted<handlers<F, Fs...>>(std::move(f), std::move(fs)...)) {}

  // -- properties -----------------------------------------------------------

  explicit operator bool() const noexcept { return static_cast<bool>(impl_); }

  // -- operations -----------------------------------------------------------

  /// Runs the first matching handler and answers through `context`; false if none matched.
  bool invoke(message& msg, detail::response_context& context) const {
    return impl_ && impl_->invoke(msg, context);
  }

 private:
  struct impl : detail::ref_counted {
    virtual bool invoke(message& msg, detail::response_context& context) = 0;
  };

  template <class... Fs>
  struct handlers final : impl {
    explicit handlers(Fs... fs) : functions(std::move(fs)...) {}
    bool invoke(message& msg, detail::response_context& context) override {
      detail::result_sink sink{context};
      return std::apply([&](auto&... f) { return (detail::try_invoke(f, msg, sink) || ...); },
                        functions);
    }
    std::tuple<Fs...> functions;
  };

  detail::intrusive_ptr<impl> impl_;
};

}  // namespace troupe
