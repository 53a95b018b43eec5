// Actors across the nodes of an MPI job: every test runs on every node (see main.cpp).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

#include <mpi.h>

#include "troupe/async/promise.hpp"
#include "troupe/net.hpp"

using namespace std::chrono_literals;
using troupe::actor;
using troupe::behavior;
using troupe::event_based_actor;

namespace {

/// A type of the program's own, with one cereal serialize function.
struct point {
  double x = 0;
  double y = 0;
  std::string label;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(x, y, label);
  }
  friend bool operator==(const point&, const point&) = default;
};

/// Has no serialize function: cannot cross nodes.
struct opaque {
  int value = 0;
};

/// Refuses to be read back when negative (a decoding failure on arrival).
struct fragile {
  int value = 0;

  template <class Archive>
  void save(Archive& ar) const {
    ar(value);
  }
  template <class Archive>
  void load(Archive& ar) {
    ar(value);
    if (value < 0) throw std::runtime_error("fragile: a negative value");
  }
};

troupe::config net_config() {
  troupe::config cfg;
  cfg.threads = 2;
  cfg.add_actor_type(
      "adder", [](event_based_actor*) -> behavior { return {[](int a, int b) { return a + b; }}; });
  cfg.add_actor_type("scaler", [](event_based_actor*, int factor) -> behavior {
    return {[factor](int x) { return x * factor; }};
  });
  cfg.add_actor_type("echo", [](event_based_actor*) -> behavior {
    return {
        [](std::vector<double>& v) { return std::move(v); },
        [](const point& p) { return p; },
        [](const fragile& f) { return f.value; },
        [](const std::string& s, const std::vector<int>& v, const std::map<std::string, int>& m,
           const std::unordered_map<int, std::string>& u, const std::optional<double>& o,
           const std::variant<int, std::string>& var, const std::tuple<int, char, bool>& t,
           const std::pair<std::int64_t, float>& p, const std::array<std::uint16_t, 3>& a,
           troupe::errc code, const troupe::error& e) {
          return std::make_tuple(s, v, m, u, o, var, t, p, a, code, e);
        },
    };
  });
  // Forwards the request to the actor it is given, so that the response comes from a third
  // node.
  cfg.add_actor_type("forwarder", [](event_based_actor* self) -> behavior {
    return {[self](actor target, int a, int b) { self->delegate(target, a, b); }};
  });
  // Counts the integers it gets and checks they come in order.
  cfg.add_actor_type("counter", [](event_based_actor*) -> behavior {
    auto next = std::make_shared<int>(0);
    auto in_order = std::make_shared<bool>(true);
    return {
        [next, in_order](int value) {
          if (value != *next) *in_order = false;
          ++*next;
        },
        [next, in_order](const std::string&) { return std::make_pair(*next, *in_order); },
    };
  });
  // Answers with what cannot cross nodes, or what cannot be read back on arrival.
  cfg.add_actor_type("bad_answers", [](event_based_actor*) -> behavior {
    return {
        [](int) { return opaque{1}; },
        [](double) { return fragile{-1}; },
    };
  });
  // Never answers: its requests wait for a timeout.
  cfg.add_actor_type("silent", [](event_based_actor* self) -> behavior {
    auto kept = std::make_shared<std::vector<troupe::response_promise>>();
    return {[self, kept](int) { kept->push_back(self->make_response_promise()); }};
  });
  // Ends with a reason of its own on request.
  cfg.add_actor_type("mortal", [](event_based_actor* self) -> behavior {
    return {[self](const std::string& why) {
      self->quit(troupe::error{troupe::errc::runtime_error, why});
    }};
  });
  return cfg;
}

}  // namespace

TEST(net, nodes_are_the_ranks_of_the_job) {
  troupe::actor_system sys{net_config()};
  int rank = 0;
  int ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  EXPECT_EQ(sys.nodes().this_node(), static_cast<troupe::node_id>(rank));
  EXPECT_EQ(sys.nodes().size(), static_cast<troupe::node_id>(ranks));
}

TEST(net, a_request_to_an_actor_spawned_on_every_node) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  for (troupe::node_id node = 0; node < nodes.size(); ++node) {
    auto adder = sys.spawn_on(node, "adder").get();
    EXPECT_EQ(adder->is_remote(), node != 0);
    EXPECT_EQ(troupe::request<int>(adder, 20, static_cast<int>(node)).get(),
              20 + static_cast<int>(node));
  }
  auto scaler = sys.spawn_on(nodes.size() - 1, "scaler", 7).get();
  EXPECT_EQ(troupe::request<int>(scaler, 6).get(), 42);
}

TEST(net, a_handle_forwarded_through_a_third_node_answers) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  auto adder = sys.spawn_on(nodes.size() - 1, "adder").get();
  auto forwarder = sys.spawn_on(1 % nodes.size(), "forwarder").get();
  EXPECT_EQ(troupe::request<int>(forwarder, adder, 2, 3).get(), 5);
  // The handle comes back to node 0 as the same handle.
  auto local = sys.spawn([](int a, int b) { return a * b; });
  EXPECT_EQ(troupe::request<int>(forwarder, local, 4, 5).get(), 20);
}

TEST(net, a_request_across_nodes_times_out) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  auto silent = sys.spawn_on(nodes.size() - 1, "silent").get();
  try {
    troupe::request<int>(silent, 100ms, 1).get();
    ADD_FAILURE() << "no timeout";
  } catch (const troupe::error& e) {
    EXPECT_EQ(e.code(), troupe::errc::request_timeout) << e.what();
  }
}

TEST(net, composition_across_nodes) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  auto first = sys.spawn_on(1 % nodes.size(), "scaler", 3).get();
  auto second = sys.spawn_on(nodes.size() - 1, "scaler", 5).get();
  auto both = second * first;
  EXPECT_EQ(troupe::request<int>(both, 2).get(), 30);
}

TEST(net, a_hundred_thousand_messages_arrive_in_order) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  auto counter = sys.spawn_on(1, "counter").get();
  constexpr int count = 100000;
  for (int i = 0; i < count; ++i) troupe::send(counter, i);
  auto [seen, in_order] =
      troupe::request<std::pair<int, bool>>(counter, std::string{"count"}).get();
  EXPECT_EQ(seen, count);
  EXPECT_TRUE(in_order);
}

TEST(net, a_256_mib_vector_round_trip_is_bit_identical) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  auto echo = sys.spawn_on(1, "echo").get();
  std::vector<double> data(std::size_t{256} << 17);  // 256 MiB
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<double>(i) * 0.5 - 7.25;
  auto back = troupe::request<std::vector<double>>(echo, data).get();
  ASSERT_EQ(back.size(), data.size());
  EXPECT_EQ(std::memcmp(back.data(), data.data(), data.size() * sizeof(double)), 0);
}

TEST(net, an_empty_vector_round_trip_stays_empty) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  auto echo = sys.spawn_on(1, "echo").get();
  EXPECT_TRUE(troupe::request<std::vector<double>>(echo, std::vector<double>{}).get().empty());
}

TEST(net, the_standard_types_and_errors_cross_nodes) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  auto echo = sys.spawn_on(nodes.size() - 1, "echo").get();
  using all = std::tuple<std::string, std::vector<int>, std::map<std::string, int>,
                         std::unordered_map<int, std::string>, std::optional<double>,
                         std::variant<int, std::string>, std::tuple<int, char, bool>,
                         std::pair<std::int64_t, float>, std::array<std::uint16_t, 3>, troupe::errc,
                         troupe::error>;
  all sent{"text",
           {1, -2, 3},
           {{"a", 1}, {"b", 2}},
           {{7, "seven"}},
           2.5,
           std::string{"alternative"},
           {9, 'c', true},
           {-5, 1.5f},
           {1, 2, 3},
           troupe::errc::kill,
           troupe::error{troupe::errc::out_of_range, "an error value"}};
  auto back =
      std::apply([&](auto&... xs) { return troupe::request<all>(echo, xs...).get(); }, sent);
  EXPECT_EQ(std::get<0>(back), std::get<0>(sent));
  EXPECT_EQ(std::get<1>(back), std::get<1>(sent));
  EXPECT_EQ(std::get<2>(back), std::get<2>(sent));
  EXPECT_EQ(std::get<3>(back), std::get<3>(sent));
  EXPECT_EQ(std::get<4>(back), std::get<4>(sent));
  EXPECT_EQ(std::get<5>(back), std::get<5>(sent));
  EXPECT_EQ(std::get<6>(back), std::get<6>(sent));
  EXPECT_EQ(std::get<7>(back), std::get<7>(sent));
  EXPECT_EQ(std::get<8>(back), std::get<8>(sent));
  EXPECT_EQ(std::get<9>(back), std::get<9>(sent));
  EXPECT_EQ(std::get<10>(back).code(), troupe::errc::out_of_range);
  EXPECT_STREQ(std::get<10>(back).what(), "an error value");
  point p{1.5, -2.0, "a point"};
  EXPECT_EQ(troupe::request<point>(echo, p).get(), p);
}

TEST(net, bad_requests_fail_with_errors_that_name_them) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  const troupe::node_id last = nodes.size() - 1;
  auto message_of = [](auto future) -> std::string {
    try {
      future.get();
    } catch (const troupe::error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message_of(sys.spawn_on(last, "no-such-type")).find("'no-such-type'"),
            std::string::npos);
  EXPECT_NE(message_of(sys.spawn_on(last, "scaler", std::string{"seven"})).find("(int)"),
            std::string::npos);
  EXPECT_NE(message_of(sys.spawn_on(99, "adder")).find("node 99"), std::string::npos);
  EXPECT_NE(message_of(sys.lookup_on(last, "nobody")).find("'nobody'"), std::string::npos);
  EXPECT_NE(message_of(sys.lookup_on(99, "nobody")).find("node 99"), std::string::npos);
  auto echo = sys.spawn_on(last, "echo").get();
  try {
    troupe::send(echo, opaque{1});
    ADD_FAILURE() << "an opaque message was sent";
  } catch (const troupe::error& e) {
    EXPECT_NE(std::string{e.what()}.find("opaque"), std::string::npos) << e.what();
  }
  const std::string refused = message_of(troupe::request<int>(echo, fragile{-1}));
  EXPECT_NE(refused.find("fragile"), std::string::npos) << refused;
  EXPECT_NE(refused.find("node 0"), std::string::npos) << refused;
  EXPECT_EQ(troupe::request<int>(echo, fragile{5}).get(), 5);
}

TEST(net, an_answer_that_cannot_cross_reaches_the_requester_as_an_error) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  auto answers = sys.spawn_on(nodes.size() - 1, "bad_answers").get();
  try {
    troupe::request<opaque>(answers, 1).get();
    ADD_FAILURE() << "an opaque answer arrived";
  } catch (const troupe::error& e) {
    EXPECT_NE(std::string{e.what()}.find("opaque"), std::string::npos) << e.what();
  }
  try {
    troupe::request<fragile>(answers, 1.0).get();
    ADD_FAILURE() << "a fragile answer was read";
  } catch (const troupe::error& e) {
    EXPECT_NE(std::string{e.what()}.find("fragile"), std::string::npos) << e.what();
    EXPECT_NE(std::string{e.what()}.find("node " + std::to_string(nodes.size() - 1)),
              std::string::npos)
        << e.what();
  }
}

TEST(net, a_system_with_nodes_off_stays_alone_under_mpirun) {
  auto cfg = net_config();
  cfg.nodes = "off";
  troupe::actor_system sys{cfg};
  EXPECT_EQ(sys.nodes().size(), 1u);
  EXPECT_EQ(sys.nodes().this_node(), 0u);
  auto adder = sys.spawn_on(0, "adder").get();
  EXPECT_EQ(troupe::request<int>(adder, 2, 3).get(), 5);
  EXPECT_NE(std::string{[&] {
              try {
                sys.spawn_on(1, "adder").get();
              } catch (const troupe::error& e) {
                return std::string{e.what()};
              }
              return std::string{};
            }()}
                .find("the job has 1 node"),
            std::string::npos);
}

TEST(net, named_actors_are_found_on_any_node) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  const int me = static_cast<int>(nodes.this_node());
  sys.registry().put("scaler", sys.spawn([me](int x) { return x * 100 + me; }));
  if (me != 0) return;
  for (troupe::node_id node = 0; node < nodes.size(); ++node) {
    // A lookup finds what is registered when it arrives, and the other nodes may not have got
    // that far yet. (An MPI_Barrier here would call MPI beside the progress thread, which TSan
    // cannot follow into Open MPI.)
    actor found;
    for (int attempt = 0; !found; ++attempt) {
      try {
        found = sys.lookup_on(node, "scaler").get();
      } catch (const troupe::error& e) {
        ASSERT_NE(std::string{e.what()}.find("no actor is registered as 'scaler'"),
                  std::string::npos)
            << e.what();
        ASSERT_LT(attempt, 1000) << "node " << node << " never registered its actor";
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
      }
    }
    EXPECT_EQ(troupe::request<int>(found, 3).get(), 300 + static_cast<int>(node));
  }
}

TEST(net, a_monitor_sees_a_remote_actor_end_with_its_reason) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  auto mortal = sys.spawn_on(nodes.size() - 1, "mortal").get();
  troupe::promise<std::string> seen;
  auto reported = seen.get_future();
  auto watcher = sys.spawn(
      [&seen](event_based_actor* self, actor target) -> behavior {
        self->set_down_handler(
            [&seen](troupe::down_msg& down) { seen.set_value(down.reason.what()); });
        self->monitor(target);
        return {[](int) {}};
      },
      mortal);
  troupe::send(mortal, std::string{"the end"});
  const std::string reason = reported.get();
  EXPECT_NE(reason.find("the end"), std::string::npos) << reason;
  EXPECT_NE(reason.find("node " + std::to_string(nodes.size() - 1)), std::string::npos) << reason;
}

TEST(net, a_link_across_nodes_carries_the_exit) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  if (nodes.this_node() != 0) return;
  auto mortal = sys.spawn_on(1, "mortal").get();
  troupe::promise<troupe::errc> seen;
  auto reported = seen.get_future();
  auto linked = sys.spawn(
      [&seen](event_based_actor* self, actor target) -> behavior {
        self->set_exit_handler(
            [&seen](troupe::exit_msg& exit) { seen.set_value(exit.reason.code()); });
        self->link_to(target);
        return {[](int) {}};
      },
      mortal);
  troupe::send(mortal, std::string{"linked end"});
  EXPECT_EQ(reported.get(), troupe::errc::runtime_error);
}

TEST(net, a_node_that_ends_early_still_serves_until_the_job_ends) {
  troupe::actor_system sys{net_config()};
  auto& nodes = sys.nodes();
  // Every node but 0 reaches its destructor at once; node 0 uses them afterwards.
  if (nodes.this_node() != 0) return;
  std::this_thread::sleep_for(50ms);
  for (troupe::node_id node = 1; node < nodes.size(); ++node) {
    auto adder = sys.spawn_on(node, "adder").get();
    EXPECT_EQ(troupe::request<int>(adder, 1, 1).get(), 2);
  }
}
