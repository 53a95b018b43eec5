#include "troupe/kernel/compaction.hpp"

#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "kernel/primitives/scan_kernels.hpp"
#include "troupe/async/when_all.hpp"
#include "troupe/core/event_based_actor.hpp"
#include "troupe/core/request.hpp"
#include "troupe/kernel/portable_source.hpp"
#include "troupe/kernel/scan.hpp"
#include "troupe/kernel/spawn_kernel.hpp"

namespace troupe::kernel {

namespace {

using u32 = std::uint32_t;
using columns = std::vector<mem_ref<u32>>;

// `positions` is the inclusive count of kept elements: element i goes to positions[i] - 1.
constexpr const char* scatter_body = R"(
KERNEL void compact_scatter(GLOBAL const u32* column, GLOBAL const u32* keep,
                            GLOBAL const u32* positions, GLOBAL u32* target, u32 n) {
  u32 i = GLOBAL_ID;
  if (i < n && keep[i] != 0) target[positions[i] - 1] = column[i];
}
)";

actor spawn_scatter(actor_system& system, const device_set& devices) {
  using inputs = std::tuple<nd_range, mem_ref<u32>, mem_ref<u32>, mem_ref<u32>, mem_ref<u32>, u32>;
  return system.spawn_kernel(
      portable_source(scatter_body), "compact_scatter", nd_range{{1}}, devices,
      map_input([](mem_ref<u32> column, mem_ref<u32> keep, mem_ref<u32> positions,
                   mem_ref<u32> target, u32 n) -> std::optional<inputs> {
        return inputs{detail::items_range(n), std::move(column), std::move(keep),
                      std::move(positions),   std::move(target), n};
      }),
      in<u32, ref>{}, in<u32, ref>{}, in<u32, ref>{}, in_out<u32, ref, ref>{}, priv<u32, val>{});
}

/// The columns at the kept positions, once `positions` (the scan of keep) is known.
future<columns> scatter_kept(actor scatter, columns data, mem_ref<u32> keep,
                             mem_ref<u32> positions) {
  const std::size_t n = positions.size();
  auto last = positions.memory().read(n - 1, 1, after(positions.ready()));
  return std::move(last).then([scatter = std::move(scatter), data = std::move(data),
                               keep = std::move(keep), positions = std::move(positions),
                               n](std::vector<u32> count) {
    const u32 kept = count.at(0);
    if (kept == 0) return make_ready_future(columns(data.size()));
    std::vector<future<mem_ref<u32>>> parts;
    parts.reserve(data.size());
    for (const auto& column : data) {
      mem_ref<u32> target{keep.device().allocate<u32>(kept), kept, make_ready_future().share()};
      parts.push_back(troupe::request<mem_ref<u32>>(scatter, column, keep, positions,
                                                    std::move(target), static_cast<u32>(n)));
    }
    return when_all(std::move(parts)).then([](std::vector<future<mem_ref<u32>>> done) {
      columns result;
      result.reserve(done.size());
      for (auto& part : done) result.push_back(part.get());
      return result;
    });
  });
}

class compaction_actor final : public event_based_actor {
 public:
  compaction_actor(actor_system& system, const device_set& devices)
      : event_based_actor(system, "compaction"),
        scan_(spawn_scan(system, devices, {scan_operator::sum, true, true, false})),
        scatter_(spawn_scatter(system, devices)) {}

  behavior make_behavior() override {
    return {[this](columns data, mem_ref<u32> keep) -> response_promise {
      auto promise = make_response_promise();
      if (auto problem = check(data, keep)) {
        promise.deliver(error{errc::invalid_argument, "compaction: " + *problem});
        return promise;
      }
      troupe::request<mem_ref<u32>>(scan_, keep)
          .then([scatter = scatter_, data = std::move(data), keep](mem_ref<u32> positions) mutable {
            return scatter_kept(std::move(scatter), std::move(data), std::move(keep),
                                std::move(positions));
          })
          .then([promise](future<columns> result) mutable {
            try {
              promise.deliver(result.get());
            } catch (const error& e) {
              promise.deliver(e);
            } catch (const std::exception& e) {
              promise.deliver(error{errc::runtime_error, std::string{"compaction: "} + e.what()});
            }
          });
      return promise;
    }};
  }

 private:
  static std::optional<std::string> check(const columns& data, const mem_ref<u32>& keep) {
    if (!keep.valid()) return "the keep mem_ref is empty";
    if (data.empty()) return "no columns to compact";
    for (std::size_t c = 0; c < data.size(); ++c) {
      if (!data[c].valid()) return "column " + std::to_string(c) + " is an empty mem_ref";
      if (data[c].size() != keep.size()) {
        return "column " + std::to_string(c) + " has " + std::to_string(data[c].size()) +
               " elements, keep has " + std::to_string(keep.size());
      }
      if (!(data[c].device() == keep.device())) {
        return "column " + std::to_string(c) + " is on " + data[c].device().name() + ", keep on " +
               keep.device().name() + " (move it with mem_ref::copy_to)";
      }
    }
    return std::nullopt;
  }

  actor scan_;
  actor scatter_;
};

}  // namespace

actor spawn_compaction(actor_system& system, device_set devices) {
  return system.spawn<compaction_actor>(devices);
}

}  // namespace troupe::kernel
