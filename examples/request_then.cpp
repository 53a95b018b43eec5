// request_then: one actor asks another without blocking. self->request(...).then(on_value,
// on_error) returns at once; the handlers run later, inside the requesting actor, when the
// answer (or an error) arrives. Meanwhile the actor keeps processing other messages.
#include <iostream>
#include <string>

#include "troupe/troupe.hpp"

int main() {
  troupe::actor_system system;
  troupe::scoped_actor self{system};  // main's mailbox, to collect the client's reports
  auto squarer = system.spawn([](int x) { return x * x; });

  // The client has no handlers of its own: it lives while its requests are pending.
  system.spawn(
      [](troupe::event_based_actor* client, troupe::actor server, troupe::actor report_to) {
        for (int i = 1; i <= 3; ++i)
          client->request(server, i).then([=](int square) { client->send(report_to, i, square); });
        // The server has no handler for a string: on_error gets errc::unexpected_message.
        client->request(server, std::string{"seven"})
            .then([=](int) { client->send(report_to, std::string{"no error?"}); },
                  [=](troupe::error& e) { client->send(report_to, e.code()); });
      },
      squarer, self.handle());

  int correct = 0;
  for (int i = 0; i < 3; ++i)
    self->receive([&](int x, int square) {
      std::cout << "client got " << x << " * " << x << " = " << square << "\n";
      correct += square == x * x ? 1 : 0;
    });
  troupe::errc code = troupe::errc::none;
  self->receive([&](troupe::errc c) { code = c; });
  std::cout << "a request the server cannot handle failed with " << troupe::to_string(code) << "\n";
  return correct == 3 && code == troupe::errc::unexpected_message ? 0 : 1;
}
