// Future composition on Boost.Thread (1.74): boost::future with then() and when_all(), and a
// boost::executors::basic_thread_pool for the pool continuations.
#define BOOST_THREAD_VERSION 5
#define BOOST_THREAD_PROVIDES_FUTURE_CONTINUATION
#define BOOST_THREAD_PROVIDES_FUTURE_WHEN_ALL_WHEN_ANY
#define BOOST_THREAD_PROVIDES_EXECUTORS
#include <boost/thread/executors/basic_thread_pool.hpp>
#include <boost/thread/future.hpp>

#include <vector>

#include "async/futures.hpp"

namespace troupe::bench {

namespace {

int64_t add_one(boost::future<int64_t> previous) {
  return previous.get() + 1;
}

}  // namespace

struct futures_boost::state {
  explicit state(int threads) : pool(static_cast<unsigned>(threads)) {}

  boost::executors::basic_thread_pool pool;
};

futures_boost::futures_boost(int threads) : state_(std::make_unique<state>(threads)) {}

futures_boost::~futures_boost() = default;

int64_t futures_boost::then_chain_inline(int64_t length) {
  boost::promise<int64_t> first;
  boost::future<int64_t> last = first.get_future();
  for (int64_t link = 0; link < length; ++link) last = last.then(boost::launch::sync, add_one);
  first.set_value(0);
  return last.get();
}

int64_t futures_boost::then_chain_pool(int64_t length) {
  boost::promise<int64_t> first;
  boost::future<int64_t> last = first.get_future();
  for (int64_t link = 0; link < length; ++link) last = last.then(state_->pool, add_one);
  first.set_value(0);
  return last.get();
}

int64_t futures_boost::when_all_sum(int64_t n) {
  std::vector<boost::promise<int64_t>> promises(static_cast<std::size_t>(n));
  std::vector<boost::future<int64_t>> futures;
  futures.reserve(promises.size());
  for (auto& promise : promises) futures.push_back(promise.get_future());
  auto all = boost::when_all(futures.begin(), futures.end());
  for (int64_t index = 0; index < n; ++index)
    promises[static_cast<std::size_t>(index)].set_value(index);
  int64_t sum = 0;
  for (auto& future : all.get()) sum += future.get();
  return sum;
}

}  // namespace troupe::bench
