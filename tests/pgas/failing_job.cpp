// Jobs that must end, loudly and without hanging. `failing_job handler_throws`: wait() throws a
// handler's error on every PE and nobody catches it. `failing_job handler_error_unreported`: the
// actor is left without wait() and the world destroyed before any collective reports the error.
// `failing_job pe_dies`: a PE is lost mid-run. CTest checks what they print.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "troupe/pgas.hpp"

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  const std::string which = argc > 1 ? argv[1] : "";
  {
    troupe::pgas::actor<int> actor{world, [&](int value, int) {
                                     if (which != "pe_dies" && value == 42)
                                       throw std::runtime_error("the answer is not welcome here");
                                   }};
    for (int i = 0; i < 100; ++i) actor.send(i % world.npes(), i);
    if (which == "pe_dies" && world.pe() == 1) std::abort();  // a PE lost mid-run
    actor.done();
    if (which != "handler_error_unreported") actor.wait();
  }
  return 0;
}
