// Configuration from defaults, the environment and the command line, with clear errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "troupe/troupe.hpp"

namespace {

struct environment_guard {
  explicit environment_guard(const char* name) : name_(name) {}
  ~environment_guard() { unsetenv(name_); }
  const char* name_;
};

std::string error_text(int argc, const char* const* argv) {
  try {
    troupe::config cfg{argc, argv};
  } catch (const troupe::error& e) {
    EXPECT_EQ(e.code(), troupe::errc::invalid_argument);
    return e.what();
  }
  return {};
}

TEST(config, command_line_options_are_taken_and_removed) {
  const char* argv[] = {"prog", "--troupe.threads=3", "input.dat", "--troupe.throughput",
                        "50",   "--verbose"};
  troupe::config cfg{6, argv};
  EXPECT_EQ(cfg.threads, 3u);
  EXPECT_EQ(cfg.throughput, 50u);
  ASSERT_EQ(cfg.remaining_args.size(), 3u);
  EXPECT_EQ(cfg.remaining_args[1], "input.dat");
  EXPECT_EQ(cfg.remaining_args[2], "--verbose");
}

TEST(config, environment_applies_and_command_line_wins) {
  environment_guard guard{"TROUPE_THREADS"};
  setenv("TROUPE_THREADS", "5", 1);
  const char* none[] = {"prog"};
  EXPECT_EQ(troupe::config(1, none).threads, 5u);
  const char* argv[] = {"prog", "--troupe.threads=2"};
  EXPECT_EQ(troupe::config(2, argv).threads, 2u);
}

TEST(config, bad_values_and_unknown_options_are_named) {
  const char* zero[] = {"prog", "--troupe.throughput=0"};
  EXPECT_NE(error_text(2, zero).find("--troupe.throughput"), std::string::npos);
  const char* many[] = {"prog", "--troupe.threads=1000000"};
  EXPECT_NE(error_text(2, many).find("--troupe.threads"), std::string::npos);
  const char* hardware[] = {"prog", "--troupe.threads=0"};
  EXPECT_EQ(troupe::config(2, hardware).threads, 0u);  // 0 asks for one per hardware thread
  const char* word[] = {"prog", "--troupe.throughput=lots"};
  EXPECT_NE(error_text(2, word).find("'lots'"), std::string::npos);
  const char* unknown[] = {"prog", "--troupe.thread=4"};
  EXPECT_NE(error_text(2, unknown).find("--troupe.thread=4"), std::string::npos);

  environment_guard guard{"TROUPE_THREADS"};
  setenv("TROUPE_THREADS", "-1", 1);
  const char* none[] = {"prog"};
  EXPECT_NE(error_text(1, none).find("TROUPE_THREADS"), std::string::npos);
}

TEST(config, nodes_is_auto_or_off) {
  const char* none[] = {"prog"};
  EXPECT_EQ(troupe::config(1, none).nodes, "auto");
  const char* off[] = {"prog", "--troupe.nodes=off"};
  EXPECT_EQ(troupe::config(2, off).nodes, "off");
  const char* wrong[] = {"prog", "--troupe.nodes=some"};
  EXPECT_NE(error_text(2, wrong).find("--troupe.nodes: expected 'auto' or 'off', found 'some'"),
            std::string::npos);
  environment_guard guard{"TROUPE_NODES"};
  setenv("TROUPE_NODES", "many", 1);
  EXPECT_NE(error_text(1, none).find("TROUPE_NODES"), std::string::npos);
}

TEST(config, spare_threads_come_from_the_environment_and_the_command_line) {
  EXPECT_EQ(troupe::config{}.spare_threads, 256u);
  environment_guard guard{"TROUPE_SPARE_THREADS"};
  setenv("TROUPE_SPARE_THREADS", "7", 1);
  const char* none[] = {"prog"};
  EXPECT_EQ(troupe::config(1, none).spare_threads, 7u);
  const char* zero[] = {"prog", "--troupe.spare-threads=0"};
  EXPECT_EQ(troupe::config(2, zero).spare_threads, 0u);  // 0: blocking on a worker fails
  const char* word[] = {"prog", "--troupe.spare-threads=some"};
  auto text = error_text(2, word);
  EXPECT_NE(text.find("--troupe.spare-threads"), std::string::npos) << text;
  EXPECT_NE(text.find("'some'"), std::string::npos) << text;
  const char* unknown[] = {"prog", "--troupe.spares=4"};
  EXPECT_NE(error_text(2, unknown).find("--troupe.spare-threads"), std::string::npos);
  setenv("TROUPE_SPARE_THREADS", "x", 1);
  EXPECT_NE(error_text(1, none).find("TROUPE_SPARE_THREADS"), std::string::npos);
}

TEST(config, the_system_uses_the_thread_count) {
  troupe::config cfg;
  cfg.threads = 3;
  cfg.spare_threads = 5;
  troupe::actor_system sys{cfg};
  EXPECT_EQ(sys.scheduler().num_workers(), 3u);
  EXPECT_EQ(sys.scheduler().spare_threads(), 5u);
  EXPECT_EQ(sys.scheduler().started_workers(), 3u) << "spares start only when a worker blocks";
  cfg.threads = 0;
  EXPECT_GE(cfg.resolved_threads(), 1u);
}

#if defined(__linux__)
// Read back from /proc: what top -H and perf show.
TEST(config, the_workers_are_named) {
  troupe::config cfg;
  cfg.threads = 3;
  troupe::actor_system sys{cfg};
  std::size_t workers = 0;
  for (const auto& task : std::filesystem::directory_iterator{"/proc/self/task"}) {
    std::ifstream comm{task.path() / "comm"};
    std::string name;
    std::getline(comm, name);
    workers += name == "troupe-worker";
  }
  EXPECT_EQ(workers, 3u);
}
#endif

}  // namespace
