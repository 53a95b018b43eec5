// The lambda form: a lambda runs on another PE against that PE's state, and may send lambdas on
// from there. Here each token walks around the ring of PEs; termination detection knows when the
// last hop is done.
//   mpirun -n 4 build/release/examples/pgas_lambda
#include <cstdint>
#include <iostream>

#include "troupe/pgas.hpp"

struct state {
  std::int64_t visits = 0;  // this PE's count of tokens that passed through
};

using ring_actor = troupe::pgas::lambda_actor<state>;

// A named function object, so that it can send itself on. Its captures (one int) are shipped.
struct hop {
  int left;
  void operator()(state& here, ring_actor::context& at) const {
    ++here.visits;
    if (left > 0) at.send((at.pe() + 1) % at.npes(), hop{left - 1});
  }
};

int main(int argc, char** argv) {
  troupe::pgas::world world{argc, argv};
  state mine;
  ring_actor ring{world, mine};
  for (int token = 0; token < 10; ++token) ring.send(world.pe(), hop{world.npes() * 3});
  // A plain lambda works too, when it needs no nested sends.
  ring.send((world.pe() + 1) % world.npes(), [](state& here) { here.visits += 1000; });
  ring.done();
  ring.wait();

  const auto visits = world.all_reduce(mine.visits);
  const std::int64_t expected = std::int64_t{world.npes()} * (10 * (world.npes() * 3 + 1) + 1000);
  if (world.pe() == 0)
    std::cout << "lambda ring: " << visits << " visits (expected " << expected << ")\n";
  return visits == expected ? 0 : 1;
}
