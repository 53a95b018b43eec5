// The device layer's threads belong to an actor system: none survives it (DESIGN.md: no
// process-wide singletons), and a system made after another works as the first did.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "device_fixture.hpp"

namespace troupe::test {
namespace {

/// The names of this process's threads that troupe named ("troupe-..."), from /proc.
std::vector<std::string> troupe_threads() {
  std::vector<std::string> found;
  for (const auto& task : std::filesystem::directory_iterator{"/proc/self/task"}) {
    std::ifstream comm{task.path() / "comm"};
    std::string name;
    if (std::getline(comm, name) && name.rfind("troupe-", 0) == 0) found.push_back(name);
  }
  return found;
}

std::string joined(const std::vector<std::string>& names) {
  std::string all;
  for (const auto& name : names) all += (all.empty() ? "" : ", ") + name;
  return all;
}

class system_threads : public ::testing::TestWithParam<std::string> {
 protected:
  std::size_t index() const { return std::stoul(GetParam().substr(0, GetParam().find('_'))); }
};

TEST_P(system_threads, none_survives_its_system_and_the_next_system_works_alike) {
  ASSERT_TRUE(troupe_threads().empty()) << "before the first system: " << joined(troupe_threads());
  // Large enough that the read's new vector is faulted in by several threads first.
  std::vector<std::uint32_t> data((std::size_t{9} << 20) / sizeof(std::uint32_t) + 3);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint32_t>(i * 5 + 3);
  for (int round = 0; round < 2; ++round) {
    {
      actor_system sys{device_config()};
      auto dev = sys.devices()[index()];
      auto buf = dev.allocate<std::uint32_t>(data.size());
      buf.write(data).get();
      EXPECT_TRUE(buf.read().get() == data) << "round " << round;
    }
    const auto left = troupe_threads();
    EXPECT_TRUE(left.empty()) << "after system " << round << " was destroyed: " << joined(left);
  }
}

INSTANTIATE_TEST_SUITE_P(devices, system_threads, ::testing::ValuesIn(device_names()),
                         [](const auto& param_info) { return param_info.param; });
TROUPE_DEVICE_SUITE_MAY_BE_EMPTY(system_threads);

}  // namespace
}  // namespace troupe::test
