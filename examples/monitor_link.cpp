// monitor_link: what happens when an actor fails. An exception in a handler ends only that
// actor: its requester gets an error, monitors get a down_msg, and linked actors get an
// exit_msg that ends them with the same reason, unless they trap it with set_exit_handler.
#include <iostream>
#include <stdexcept>
#include <string>

#include "troupe/troupe.hpp"

using troupe::actor;
using troupe::event_based_actor;

int main() {
  troupe::actor_system system;
  troupe::scoped_actor self{system};
  auto worker = system.spawn([](int x) {
    if (x < 0) throw std::invalid_argument("negative input");
    return x;
  });
  // Linked to the worker: ends when the worker fails.
  auto follower = system.spawn(
      [](event_based_actor* me, actor peer) {
        me->link_to(peer);
        return troupe::behavior{[](int x) { return x; }};
      },
      worker);
  // Linked too, but traps the exit: it gets the exit_msg as a message and lives on.
  auto survivor = system.spawn(
      [](event_based_actor* me, actor peer, actor report_to) {
        me->set_exit_handler([=](troupe::exit_msg& exit) {
          me->send(report_to, std::string{"survivor"}, exit.reason.code());
        });
        me->link_to(peer);
        return troupe::behavior{[](int x) { return x; }};
      },
      worker, self.handle());
  // Monitors the worker and the follower and reports each down_msg. Main keeps its handle:
  // monitoring others does not keep an actor alive, and one nobody refers to ends.
  auto watcher = system.spawn(
      [](event_based_actor* me, actor first, actor second, actor report_to) {
        me->monitor(first);
        me->monitor(second);
        return troupe::behavior{[=](const troupe::down_msg& down) {
          me->send(report_to, down.source.id(), down.reason.code());
        }};
      },
      worker, follower, self.handle());

  troupe::errc request_error = troupe::errc::none;
  try {
    troupe::request<int>(worker, -1).get();
  } catch (const troupe::error& e) {
    request_error = e.code();
    std::cout << "requester: " << e.what() << "\n";
  }

  int checks_passed = request_error == troupe::errc::unhandled_exception ? 1 : 0;
  for (int i = 0; i < 3; ++i)
    self->receive(
        [&](troupe::actor_id who, troupe::errc reason) {
          std::cout << "watcher: down_msg from "
                    << (who == worker.id()     ? "worker"
                        : who == follower.id() ? "follower"
                                               : "?")
                    << ", reason " << troupe::to_string(reason) << "\n";
          checks_passed += reason == troupe::errc::unhandled_exception ? 1 : 0;
        },
        [&](const std::string& who, troupe::errc reason) {
          std::cout << who << ": trapped exit_msg, reason " << troupe::to_string(reason) << "\n";
          checks_passed += reason == troupe::errc::unhandled_exception ? 1 : 0;
        });
  int echoed = troupe::request<int>(survivor, 7).get();
  std::cout << "survivor still answers: " << echoed << "\n";
  checks_passed += echoed == 7 ? 1 : 0;

  std::cout << checks_passed << " of 5 checks passed\n";
  return checks_passed == 5 ? 0 : 1;
}
