// scoped_actor: main (or any thread that is not an actor) talking to actors by messages.
// A scoped_actor has a mailbox; send() from it, receive() blocks until a matching message
// arrives, and receive_for() gives up after a timeout. Unmatched messages wait for later.
#include <chrono>
#include <iostream>
#include <string>

#include "troupe/troupe.hpp"

using namespace std::chrono_literals;

int main() {
  troupe::actor_system system;
  troupe::scoped_actor self{system};
  // Answers with a plain send back to whoever sent the message.
  auto echo = system.spawn([](troupe::event_based_actor* me) {
    return troupe::behavior{[me](const std::string& text) { me->send(me->current_sender(), text); },
                            [me](int x) { me->send(me->current_sender(), x * 10); }};
  });

  self->send(echo, std::string{"hello"});
  self->send(echo, 4);
  // Take the int first; the string waits in the mailbox for the next receive.
  int number = 0;
  self->receive([&](int x) { number = x; });
  std::string text;
  self->receive([&](const std::string& s) { text = s; });
  std::cout << "received " << number << " and '" << text << "'\n";

  // Nothing else is coming: receive_for returns false after the timeout.
  bool got_more = self->receive_for(20ms, [](int) {});
  std::cout << "receive_for(20ms) with nothing sent: " << (got_more ? "got a message" : "timed out")
            << "\n";
  return number == 40 && text == "hello" && !got_more ? 0 : 1;
}
