// response_promise: answer a request later. A handler that cannot answer at once takes a
// response_promise, returns it, and whoever holds the promise delivers the answer; here a
// future continuation does, once a job on the scheduler has computed the sum. (A handler may
// also just return a troupe::future<T>: the actor then answers when that future is ready.)
#include <iostream>
#include <numeric>
#include <vector>

#include "troupe/troupe.hpp"

int main() {
  troupe::actor_system system;
  auto summer = system.spawn([](troupe::event_based_actor* self) {
    return troupe::behavior{[self](std::vector<long> values) {
      auto answer = self->make_response_promise();
      // Hand the work to the scheduler; the actor is free for its next message meanwhile.
      troupe::promise<long> total;
      total.get_future().then([answer](long sum) mutable { answer.deliver(sum); });
      self->system().default_executor().post(
          [values = std::move(values), total = std::move(total)]() mutable {
            total.set_value(std::accumulate(values.begin(), values.end(), 0L));
          });
      return answer;
    }};
  });

  std::vector<long> values(1000);
  std::iota(values.begin(), values.end(), 1L);
  long sum = troupe::request<long>(summer, values).get();
  std::cout << "the sum of 1..1000, answered through a response promise: " << sum
            << " (expected 500500)\n";
  return sum == 500500 ? 0 : 1;
}
