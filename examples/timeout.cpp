// timeout: a request that gives up. request(actor, timeout, args...) fails with
// errc::request_timeout if no answer arrives in time, both from main (a failed future) and
// inside an actor (the on_error handler of self->request(...).then).
#include <chrono>
#include <iostream>
#include <memory>
#include <vector>

#include "troupe/troupe.hpp"

using namespace std::chrono_literals;

int main() {
  troupe::actor_system system;
  // A server that never answers: it keeps every response promise and delivers none.
  auto silent = system.spawn([](troupe::event_based_actor* self) {
    auto unanswered = std::make_shared<std::vector<troupe::response_promise>>();
    return troupe::behavior{[self, unanswered](int) {
      unanswered->push_back(self->make_response_promise());
      return unanswered->back();
    }};
  });

  // From main: the future fails after the deadline.
  auto start = std::chrono::steady_clock::now();
  troupe::errc from_main = troupe::errc::none;
  try {
    troupe::request<int>(silent, 50ms, 1).get();
  } catch (const troupe::error& e) {
    from_main = e.code();
    std::cout << "main: " << e.what() << " (" << troupe::to_string(e.code()) << ")\n";
  }
  auto waited = std::chrono::steady_clock::now() - start;

  // From an actor: on_error runs in the requesting actor.
  troupe::scoped_actor self{system};
  system.spawn(
      [](troupe::event_based_actor* client, troupe::actor server, troupe::actor report_to) {
        client->request(server, 50ms, 2)
            .then([](int) {}, [=](troupe::error& e) { client->send(report_to, e.code()); });
      },
      silent, self.handle());
  troupe::errc from_actor = troupe::errc::none;
  self->receive([&](troupe::errc code) { from_actor = code; });
  std::cout << "actor: its request failed with " << troupe::to_string(from_actor) << "\n";

  bool ok = from_main == troupe::errc::request_timeout && waited >= 50ms &&
            from_actor == troupe::errc::request_timeout;
  std::cout << "both requests timed out after at least 50 ms: " << (ok ? "yes" : "no") << "\n";
  return ok ? 0 : 1;
}
