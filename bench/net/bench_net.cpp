// bench-net: messages between two nodes of an MPI job — troupe's net layer, raw MPI and CAF 0.17
// remote actors side by side. Run it with two ranks; rank 0 drives, prints and writes the CSV,
// rank 1 serves all three (its troupe actors, an MPI loop, a CAF system on loopback TCP):
//   mpirun -n 2 build/release/bench/bench-net --csv bench/results/net.csv
// With OMPI_MCA_btl=self,tcp, MPI (and so troupe) goes over TCP; the params then say tcp.
//
//   net_round_trip  request and response of one payload between an actor on each node, against
//                   an MPI_Send/MPI_Recv ping-pong of the same bytes between the same ranks
//   net_throughput  8-byte messages one way, against one MPI_Isend per message
//   net_bandwidth   messages of 1 KiB to 256 MiB, a window of them and one acknowledgement,
//                   against MPI_Isend/MPI_Irecv of kept buffers
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.hpp"
#include "net/net_caf.hpp"
#include "troupe/async/promise.hpp"
#include "troupe/net.hpp"

namespace {

using troupe::actor;
using troupe::behavior;
using troupe::event_based_actor;
using troupe::bench::measurement;

// -- the serving rank's MPI loop ----------------------------------------------

enum class op : std::int64_t { stop, ping_pong, stream, bandwidth };

struct command {
  op what = op::stop;
  std::int64_t bytes = 0;
  std::int64_t count = 0;
};

constexpr int command_tag = 1;
constexpr int ready_tag = 2;
constexpr int data_tag = 3;
constexpr int ack_tag = 4;

/// Waits for `request` without spinning: the idle rank must not take a core from the other's
/// threads on a small machine.
void wait_gently(MPI_Request& request) {
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds{50});
  }
}

/// Rank 1: runs what rank 0 asks, the way an MPI programmer would, until told to stop.
void serve_mpi(MPI_Comm comm) {
  std::vector<char> buffer;
  for (;;) {
    command next;
    MPI_Request request;
    MPI_Irecv(&next, sizeof next, MPI_BYTE, 0, command_tag, comm, &request);
    wait_gently(request);
    if (next.what == op::stop) return;
    buffer.resize(static_cast<std::size_t>(std::max<std::int64_t>(next.bytes, 8)));
    MPI_Send(nullptr, 0, MPI_BYTE, 0, ready_tag, comm);
    const int bytes = static_cast<int>(next.bytes);
    switch (next.what) {
      case op::ping_pong:
        for (std::int64_t i = 0; i < next.count; ++i) {
          MPI_Recv(buffer.data(), bytes, MPI_BYTE, 0, data_tag, comm, MPI_STATUS_IGNORE);
          MPI_Send(buffer.data(), bytes, MPI_BYTE, 0, data_tag, comm);
        }
        break;
      case op::stream: {
        std::int64_t received = 0;
        for (std::int64_t i = 0; i < next.count; ++i) {
          MPI_Recv(buffer.data(), 8, MPI_BYTE, 0, data_tag, comm, MPI_STATUS_IGNORE);
          ++received;
        }
        MPI_Send(&received, 1, MPI_INT64_T, 0, ack_tag, comm);
        break;
      }
      case op::bandwidth: {
        // A window of receives into one kept buffer (their contents are not looked at, as in
        // the OSU bandwidth test), then one acknowledgement.
        std::vector<MPI_Request> window(static_cast<std::size_t>(next.count));
        for (auto& receive : window)
          MPI_Irecv(buffer.data(), bytes, MPI_BYTE, 0, data_tag, comm, &receive);
        MPI_Waitall(static_cast<int>(window.size()), window.data(), MPI_STATUSES_IGNORE);
        std::int64_t received = next.bytes * next.count;
        MPI_Send(&received, 1, MPI_INT64_T, 0, ack_tag, comm);
        break;
      }
      case op::stop:
        return;
    }
  }
}

/// Rank 0's side of the MPI variants: asks rank 1 to start (not timed), then runs.
class mpi_driver {
 public:
  explicit mpi_driver(MPI_Comm comm) : comm_(comm) {}

  void prepare(op what, std::int64_t bytes, std::int64_t count) {
    command next{what, bytes, count};
    MPI_Send(&next, sizeof next, MPI_BYTE, 1, command_tag, comm_);
    MPI_Recv(nullptr, 0, MPI_BYTE, 1, ready_tag, comm_, MPI_STATUS_IGNORE);
    buffer_.assign(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 8)), 'm');
  }

  std::int64_t ping_pong(std::int64_t bytes, std::int64_t count) {
    std::int64_t equal = 0;
    const char first = buffer_[0];
    for (std::int64_t i = 0; i < count; ++i) {
      MPI_Send(buffer_.data(), static_cast<int>(bytes), MPI_BYTE, 1, data_tag, comm_);
      MPI_Recv(buffer_.data(), static_cast<int>(bytes), MPI_BYTE, 1, data_tag, comm_,
               MPI_STATUS_IGNORE);
      if (buffer_[0] == first) ++equal;
    }
    return equal;
  }

  std::int64_t stream(std::int64_t count) {
    // One MPI_Isend per message, completed in windows so that requests do not pile up.
    constexpr std::int64_t window = 1024;
    std::vector<MPI_Request> requests;
    requests.reserve(window);
    std::vector<std::int64_t> values(window);
    for (std::int64_t i = 0; i < count; ++i) {
      values[requests.size()] = i;
      requests.emplace_back();
      MPI_Isend(&values[requests.size() - 1], 1, MPI_INT64_T, 1, data_tag, comm_, &requests.back());
      if (static_cast<std::int64_t>(requests.size()) == window) {
        MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
        requests.clear();
      }
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    std::int64_t received = 0;
    MPI_Recv(&received, 1, MPI_INT64_T, 1, ack_tag, comm_, MPI_STATUS_IGNORE);
    return received;
  }

  std::int64_t bandwidth(std::int64_t bytes, std::int64_t window) {
    std::vector<MPI_Request> requests(static_cast<std::size_t>(window));
    for (auto& request : requests)
      MPI_Isend(buffer_.data(), static_cast<int>(bytes), MPI_BYTE, 1, data_tag, comm_, &request);
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    std::int64_t received = 0;
    MPI_Recv(&received, 1, MPI_INT64_T, 1, ack_tag, comm_, MPI_STATUS_IGNORE);
    return received;
  }

  void stop() {
    command done{op::stop, 0, 0};
    MPI_Send(&done, sizeof done, MPI_BYTE, 1, command_tag, comm_);
  }

 private:
  MPI_Comm comm_;
  std::vector<char> buffer_;
};

// -- troupe's side ------------------------------------------------------------

/// What the sink on node 1 is asked to report (and then start over).
struct sink_totals {
  template <class Archive>
  void serialize(Archive&) {}
};

troupe::config troupe_config(int threads) {
  troupe::config cfg;
  cfg.threads = static_cast<std::size_t>(threads);
  cfg.add_actor_type("echo", [](event_based_actor*) -> behavior {
    return {[](std::vector<char>& payload) { return std::move(payload); }};
  });
  cfg.add_actor_type("sink", [](event_based_actor*) -> behavior {
    auto messages = std::make_shared<std::int64_t>(0);
    auto bytes = std::make_shared<std::int64_t>(0);
    return {
        [messages](std::int64_t) { ++*messages; },
        [bytes](const std::vector<char>& buffer) {
          *bytes += static_cast<std::int64_t>(buffer.size());
        },
        [messages, bytes](sink_totals) {
          auto result = std::make_pair(*messages, *bytes);
          *messages = 0;
          *bytes = 0;
          return result;
        },
    };
  });
  return cfg;
}

struct ping_state {
  actor partner;
  std::vector<char> payload;
  std::int64_t left = 0;
  std::int64_t equal = 0;
  troupe::promise<std::int64_t> done;
};

void troupe_ping(event_based_actor* self, std::shared_ptr<ping_state> state) {
  self->request(state->partner, state->payload).then([self, state](std::vector<char>& back) {
    if (back == state->payload) ++state->equal;
    if (--state->left == 0) {
      state->done.set_value(state->equal);
      self->quit();
      return;
    }
    troupe_ping(self, state);
  });
}

std::int64_t troupe_round_trips(troupe::actor_system& sys, const actor& echo,
                                const std::vector<char>& payload, std::int64_t count) {
  auto state = std::make_shared<ping_state>();
  state->partner = echo;
  state->payload = payload;
  state->left = count;
  auto result = state->done.get_future();
  auto pinger = sys.spawn([state](event_based_actor* self) -> behavior {
    troupe_ping(self, state);
    return {[](int) {}};
  });
  return result.get();
}

// -- the comparisons ----------------------------------------------------------

struct variant_run {
  std::string name;
  std::function<void()> prepare;      // not timed
  std::function<std::int64_t()> run;  // timed; returns what the check compares
};

class net_bench {
 public:
  net_bench(troupe::bench::harness& bench, std::string transport)
      : bench_(bench), transport_(std::move(transport)) {}

  void compare(const std::string& benchmark, const std::string& params,
               std::vector<variant_run> variants, std::int64_t expected,
               troupe::bench::rate per_run) {
    std::vector<measurement> measured(variants.size());
    for (std::size_t v = 0; v < variants.size(); ++v) measured[v].variant = variants[v].name;
    const auto& settings = bench_.settings();
    std::cout << benchmark << "  " << params << std::endl;
    for (int repetition = 0; repetition < settings.warmup + settings.runs; ++repetition) {
      for (std::size_t turn = 0; turn < variants.size(); ++turn) {
        // Each repetition starts with the next variant: none always follows the same one.
        const std::size_t v = (turn + static_cast<std::size_t>(repetition)) % variants.size();
        auto& result = measured[v];
        if (!result.ok) continue;
        try {
          if (variants[v].prepare) variants[v].prepare();
          const auto start = std::chrono::steady_clock::now();
          const std::int64_t value = variants[v].run();
          const auto stop = std::chrono::steady_clock::now();
          if (value != expected) {
            result.ok = false;
            result.failure = "run " + std::to_string(repetition + 1) + " returned " +
                             std::to_string(value) + ", expected " + std::to_string(expected);
          } else if (repetition >= settings.warmup) {
            result.seconds.push_back(std::chrono::duration<double>(stop - start).count());
          }
        } catch (const std::exception& failure) {
          result.ok = false;
          result.failure = "run " + std::to_string(repetition + 1) + " threw: " + failure.what();
        }
      }
    }
    bench_.report(benchmark, params + ";transport=" + transport_, measured, per_run);
  }

 private:
  troupe::bench::harness& bench_;
  std::string transport_;
};

std::string transport_in_use() {
  const char* btl = std::getenv("OMPI_MCA_btl");
  const std::string value = btl != nullptr ? btl : "";
  return value.find("tcp") != std::string::npos && value.find("vader") == std::string::npos ? "tcp"
                                                                                            : "shm";
}

void drive(troupe::bench::harness& bench, troupe::actor_system& sys, MPI_Comm comm,
           troupe::bench::net_caf& caf) {
  const bool quick = bench.quick();
  net_bench runs{bench, transport_in_use()};
  mpi_driver mpi{comm};
  auto echo = sys.spawn_on(1, "echo").get();
  auto sink = sys.spawn_on(1, "sink").get();
  auto ask_sink = [&] {
    return troupe::request<std::pair<std::int64_t, std::int64_t>>(sink, sink_totals{}).get();
  };

  if (bench.selected("net_round_trip")) {
    for (std::int64_t bytes : {std::int64_t{8}, std::int64_t{1024}}) {
      const std::int64_t count = quick ? 200 : 10000;
      std::vector<char> payload(static_cast<std::size_t>(bytes), 'p');
      runs.compare("net_round_trip",
                   "bytes=" + std::to_string(bytes) + ";round_trips=" + std::to_string(count),
                   {{"troupe", {}, [&] { return troupe_round_trips(sys, echo, payload, count); }},
                    {"mpi", [&] { mpi.prepare(op::ping_pong, bytes, count); },
                     [&] { return mpi.ping_pong(bytes, count); }},
                    {"caf", {}, [&] { return caf.round_trips(payload, count); }}},
                   count, {"round_trips/s", static_cast<double>(count)});
    }
  }

  if (bench.selected("net_throughput")) {
    const std::int64_t count = quick ? 10000 : 1000000;
    runs.compare(
        "net_throughput", "bytes=8;messages=" + std::to_string(count),
        {{"troupe",
          {},
          [&] {
            for (std::int64_t i = 0; i < count; ++i) troupe::send(sink, i);
            return ask_sink().first;
          }},
         {"mpi", [&] { mpi.prepare(op::stream, 8, count); }, [&] { return mpi.stream(count); }},
         {"caf", {}, [&] { return caf.stream(count); }}},
        count, {"messages/s", static_cast<double>(count)});
  }

  if (bench.selected("net_bandwidth")) {
    const std::int64_t largest = quick ? (std::int64_t{1} << 20) : (std::int64_t{256} << 20);
    for (std::int64_t bytes = 1024; bytes <= largest; bytes *= 4) {
      // A window of messages per run: 64 small ones, fewer large ones, at least 4.
      const std::int64_t window =
          std::max<std::int64_t>(4, std::min<std::int64_t>(64, (std::int64_t{64} << 20) / bytes));
      const std::int64_t total = bytes * window;
      std::vector<std::vector<char>> prepared;
      auto fill = [&] {
        prepared.assign(static_cast<std::size_t>(window),
                        std::vector<char>(static_cast<std::size_t>(bytes), 'b'));
      };
      runs.compare("net_bandwidth",
                   "bytes=" + std::to_string(bytes) + ";window=" + std::to_string(window),
                   {{"troupe", fill,
                     [&] {
                       for (auto& message : prepared) troupe::send(sink, std::move(message));
                       return ask_sink().second;
                     }},
                    {"mpi", [&] { mpi.prepare(op::bandwidth, bytes, window); },
                     [&] { return mpi.bandwidth(bytes, window); }},
                    {"caf", fill, [&] { return caf.bandwidth(std::move(prepared)); }}},
                   total, {"GB/s", static_cast<double>(total)});
    }
  }
  mpi.stop();
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  int ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks != 2) {
    if (rank == 0) std::cerr << "bench-net: run it as an MPI job of 2 ranks, not " << ranks << "\n";
    MPI_Finalize();
    return 2;
  }
  // Rank 1 prints nothing: its own harness writes no CSV (only rank 0 reports).
  int status = 0;
  {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    troupe::bench::options settings;
    try {
      settings = troupe::bench::parse_options("net", argc, argv);
    } catch (const std::exception& failure) {
      if (rank == 0) std::cerr << "bench-net: " << failure.what() << "\n";
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    troupe::actor_system sys{troupe_config(settings.threads)};
    auto caf = std::make_unique<troupe::bench::net_caf>(settings.threads);
    MPI_Request caf_done;
    if (rank == 1) {
      auto ports = caf->publish();
      MPI_Send(&ports, sizeof ports, MPI_BYTE, 0, 0, comm);
      serve_mpi(comm);
      // CAF's client side ends first: a CAF system whose peer has gone waits for it in its
      // destructor.
      MPI_Ibarrier(comm, &caf_done);
      wait_gently(caf_done);
    } else {
      troupe::bench::net_caf::ports ports;
      MPI_Recv(&ports, sizeof ports, MPI_BYTE, 1, 0, comm, MPI_STATUS_IGNORE);
      caf->connect(ports);
      status = troupe::bench::run_main(
          "net", argc, argv, [&](troupe::bench::harness& bench) { drive(bench, sys, comm, *caf); });
      caf.reset();
      MPI_Ibarrier(comm, &caf_done);
      wait_gently(caf_done);
    }
    caf.reset();
    MPI_Comm_free(&comm);
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
