// bench-net-savina: Savina's big and fork-join with their actors spread over the nodes of an MPI
// job, against the same actors all on node 0 (what spreading costs). Node 0 drives, prints and
// writes the CSV; the other nodes serve.
//   mpirun -n 4 build/release/bench/bench-net-savina --csv bench/results/net.csv
//
//   savina_big_nodes        each actor pings random others, one ping at a time, and counts pongs
//   savina_fork_join_nodes  node 0 sends each actor its messages; each does the fork-join work
#include <mpi.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/harness.hpp"
#include "core/savina.hpp"
#include "troupe/async/promise.hpp"
#include "troupe/net.hpp"

namespace {

using troupe::actor;
using troupe::behavior;
using troupe::event_based_actor;
using troupe::bench::pseudo_random;

struct ping {
  template <class Archive>
  void serialize(Archive&) {}
};
struct pong {
  template <class Archive>
  void serialize(Archive&) {}
};
/// Starts a big actor: everyone's handles, and whom to tell when its pings are done.
struct big_start {
  std::vector<actor> all;
  actor reporter;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(all, reporter);
  }
};
struct big_done {
  std::int64_t pongs = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(pongs);
  }
};

troupe::config savina_config(int threads) {
  troupe::config cfg;
  cfg.threads = static_cast<std::size_t>(threads);
  cfg.add_actor_type(
      "big", [](event_based_actor* self, std::int64_t index, std::int64_t pings) -> behavior {
        struct state {
          std::vector<actor> all;
          actor reporter;
          pseudo_random random;
          std::int64_t pongs = 0;
        };
        auto s = std::make_shared<state>(state{{}, {}, pseudo_random{index}, 0});
        auto send_ping = [self, s, index] {
          const auto target = s->random.other(index, static_cast<std::int64_t>(s->all.size()));
          self->send(s->all[static_cast<std::size_t>(target)], ping{});
        };
        return {
            [s, send_ping, pings, self](big_start& start) {
              s->all = std::move(start.all);
              s->reporter = std::move(start.reporter);
              if (pings > 0)
                send_ping();
              else
                self->send(s->reporter, big_done{0});
            },
            [](ping) { return pong{}; },
            [s, send_ping, pings, self](pong) {
              if (++s->pongs < pings) {
                send_ping();
              } else {
                self->send(s->reporter, big_done{s->pongs});
                s->all.clear();  // no cycle of handles keeps the actors alive
              }
            },
        };
      });
  cfg.add_actor_type(
      "fork_join", [](event_based_actor* self, actor reporter, std::int64_t messages) -> behavior {
        auto received = std::make_shared<std::int64_t>(0);
        auto processed = std::make_shared<std::int64_t>(0);
        return {[=](std::int64_t message) {
          if (troupe::bench::fork_join_work(message)) ++*processed;
          if (++*received == messages) {
            self->send(reporter, big_done{*processed});
            self->quit();
          }
        }};
      });
  return cfg;
}

/// A local actor that adds up `expected` reports and then completes its future.
actor make_reporter(troupe::actor_system& sys, std::int64_t expected,
                    std::shared_ptr<troupe::promise<std::int64_t>> done) {
  auto total = std::make_shared<std::int64_t>(0);
  auto reports = std::make_shared<std::int64_t>(0);
  return sys.spawn([=](event_based_actor* self) -> behavior {
    return {[=](const big_done& report) {
      *total += report.pongs;
      if (++*reports == expected) {
        done->set_value(*total);
        self->quit();
      }
    }};
  });
}

std::vector<actor> spawn_spread(
    troupe::node_id nodes, std::int64_t count,
    const std::function<troupe::future<actor>(troupe::node_id, std::int64_t)>& spawn) {
  std::vector<troupe::future<actor>> pending;
  for (std::int64_t i = 0; i < count; ++i)
    pending.push_back(spawn(static_cast<troupe::node_id>(i % nodes), i));
  std::vector<actor> result;
  for (auto& f : pending) result.push_back(f.get());
  return result;
}

std::int64_t big(troupe::actor_system& sys, troupe::node_id nodes, std::int64_t actors,
                 std::int64_t pings) {
  auto done = std::make_shared<troupe::promise<std::int64_t>>();
  auto result = done->get_future();
  auto reporter = make_reporter(sys, actors, done);
  auto all = spawn_spread(nodes, actors, [&](troupe::node_id node, std::int64_t i) {
    return sys.spawn_on(node, "big", i, pings);
  });
  for (auto& a : all) troupe::send(a, big_start{all, reporter});
  const std::int64_t pongs = result.get();
  for (auto& a : all) troupe::send_exit(a, troupe::error{troupe::errc::user_shutdown, "done"});
  return pongs;
}

std::int64_t fork_join(troupe::actor_system& sys, troupe::node_id nodes, std::int64_t actors,
                       std::int64_t messages) {
  auto done = std::make_shared<troupe::promise<std::int64_t>>();
  auto result = done->get_future();
  auto reporter = make_reporter(sys, actors, done);
  auto all = spawn_spread(nodes, actors, [&](troupe::node_id node, std::int64_t) {
    return sys.spawn_on(node, "fork_join", reporter, messages);
  });
  for (std::int64_t m = 0; m < messages; ++m)
    for (auto& a : all) troupe::send(a, m);
  return result.get();
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  {
    troupe::bench::options settings;
    try {
      settings = troupe::bench::parse_options("net", argc, argv);
    } catch (const std::exception& failure) {
      if (rank == 0) std::cerr << "bench-net-savina: " << failure.what() << "\n";
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    troupe::actor_system sys{savina_config(settings.threads)};
    const troupe::node_id nodes = sys.nodes().size();
    if (rank == 0) {
      status = troupe::bench::run_main("net", argc, argv, [&](troupe::bench::harness& bench) {
        const bool quick = bench.quick();
        const std::string spread = "nodes=" + std::to_string(nodes);
        if (bench.selected("savina_big_nodes")) {
          const std::int64_t actors = quick ? 16 : 120;
          const std::int64_t pings = quick ? 100 : 2000;
          bench.compare<std::int64_t>(
              "savina_big_nodes",
              spread + ";actors=" + std::to_string(actors) + ";pings=" + std::to_string(pings),
              {{"troupe", [&] { return big(sys, nodes, actors, pings); }},
               {"troupe-one-node", [&] { return big(sys, 1, actors, pings); }}},
              actors * pings);
        }
        if (bench.selected("savina_fork_join_nodes")) {
          const std::int64_t actors = quick ? 16 : 64;
          const std::int64_t messages = quick ? 1000 : 20000;
          bench.compare<std::int64_t>(
              "savina_fork_join_nodes",
              spread + ";actors=" + std::to_string(actors) +
                  ";messages=" + std::to_string(messages),
              {{"troupe", [&] { return fork_join(sys, nodes, actors, messages); }},
               {"troupe-one-node", [&] { return fork_join(sys, 1, actors, messages); }}},
              actors * messages);
        }
      });
    }
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
