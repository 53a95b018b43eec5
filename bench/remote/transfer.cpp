// transfer: blocking clEnqueueWriteBuffer and clEnqueueReadBuffer of one buffer, from latency-bound
// (4 bytes) to bandwidth-bound (256 MiB) sizes, from and to pageable host memory. Small sizes
// repeat the call within a run; the time columns are per call.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "remote/remote_bench.hpp"

namespace troupe::bench::remote {
namespace {

// Each run moves at least this much (or makes `most_calls` calls), so small sizes are timed over
// many calls.
constexpr std::size_t bytes_per_run = std::size_t{64} << 20;
constexpr std::size_t most_calls = 1000;

// Host memory both sides share (they run one after the other): what is written, and where
// reads land.
struct host_side {
  std::vector<unsigned char> source;
  std::vector<unsigned char> target;
};

// Empty when the first `bytes` of `target` equal those of `source`.
std::string differences(const host_side& host, std::size_t bytes) {
  if (std::memcmp(host.target.data(), host.source.data(), bytes) == 0) return {};
  std::size_t first = 0;
  while (host.target[first] == host.source[first]) ++first;
  return "byte " + std::to_string(first) + " of " + std::to_string(bytes) + " reads " +
         std::to_string(host.target[first]) + ", expected " + std::to_string(host.source[first]);
}

device_variant variant(endpoint& side, const std::shared_ptr<host_side>& host, bool write,
                       std::size_t bytes, std::size_t calls) {
  return guarded(side.variant(), [&] {
    auto buffer = std::make_shared<opencl::memory>(side.allocate(bytes));
    cl_command_queue queue = side.queue();
    cl_mem memory = buffer->get();
    auto read_into_target = [queue, memory, host, bytes] {
      opencl::check(clEnqueueReadBuffer(queue, memory, CL_TRUE, 0, bytes, host->target.data(), 0,
                                        nullptr, nullptr),
                    "clEnqueueReadBuffer");
    };
    device_variant made;
    if (write) {
      // The buffer is cleared before each run and read back after it.
      made.prepare = [queue, memory, bytes] {
        const unsigned char zero = 0;
        opencl::check(
            clEnqueueFillBuffer(queue, memory, &zero, sizeof zero, 0, bytes, 0, nullptr, nullptr),
            "clEnqueueFillBuffer");
        opencl::check(clFinish(queue), "clFinish");
      };
      made.run = [buffer, queue, memory, host, bytes, calls] {
        for (std::size_t call = 0; call < calls; ++call)
          opencl::check(clEnqueueWriteBuffer(queue, memory, CL_TRUE, 0, bytes, host->source.data(),
                                             0, nullptr, nullptr),
                        "clEnqueueWriteBuffer");
      };
      made.check = [read_into_target, host, bytes] {
        read_into_target();
        return differences(*host, bytes);
      };
    } else {
      // The buffer holds the source bytes; the host side is cleared before each run.
      opencl::check(clEnqueueWriteBuffer(queue, memory, CL_TRUE, 0, bytes, host->source.data(), 0,
                                         nullptr, nullptr),
                    "clEnqueueWriteBuffer");
      made.prepare = [host, bytes] { std::memset(host->target.data(), 0, bytes); };
      made.run = [buffer, read_into_target, calls] {
        for (std::size_t call = 0; call < calls; ++call) read_into_target();
      };
      made.check = [host, bytes] { return differences(*host, bytes); };
    }
    return made;
  });
}

std::string size_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace

void run_transfer(device_bench& bench, setup& under_test) {
  if (!bench.selected("transfer")) return;
  const std::vector<std::size_t>& sizes = under_test.sizes.transfer_bytes;
  if (sizes.empty()) return;
  const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
  auto host = std::make_shared<host_side>();
  host->source.resize(largest);
  host->target.resize(largest);
  // Never zero, so a read that did not land shows.
  for (std::size_t index = 0; index < largest; ++index)
    host->source[index] = static_cast<unsigned char>(index % 251 + 1);
  std::printf(
      "transfer: blocking clEnqueueWriteBuffer / clEnqueueReadBuffer from and to pageable host "
      "memory, per call; GB/s = bytes moved / time\n");

  for (std::size_t bytes : sizes) {
    if (bytes > under_test.max_allocation) {
      bench.skip("transfer", under_test.label.name,
                 size_text(bytes) + " is over the device's largest allocation");
      continue;
    }
    const std::size_t calls = std::clamp<std::size_t>(
        bytes_per_run / bytes, 1, under_test.sizes.quick ? most_calls / 10 : most_calls);
    for (bool write : {true, false}) {
      comparison rows{.benchmark = "transfer",
                      .parameters = std::string("direction=") + (write ? "write" : "read") +
                                    ";bytes=" + std::to_string(bytes) +
                                    ";calls=" + std::to_string(calls),
                      .device = under_test.label,
                      .operations = static_cast<double>(calls),
                      .metric = "GB/s",
                      .units_per_run = static_cast<double>(bytes * calls) / 1e9};
      rows.variants.push_back(variant(under_test.troupe, host, write, bytes, calls));
      rows.variants.push_back(variant(under_test.native, host, write, bytes, calls));
      rows.ratios.emplace_back("troupe", "native");
      if (under_test.troupe_tls != nullptr) {
        rows.variants.push_back(variant(*under_test.troupe_tls, host, write, bytes, calls));
        rows.ratios.emplace_back("troupe-tls", "native");
        rows.ratios.emplace_back("troupe-tls", "troupe");
      }
      bench.compare(rows);
    }
  }
}

}  // namespace troupe::bench::remote
