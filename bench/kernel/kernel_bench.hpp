// bench-kernel: kernel actors against the same work written with raw OpenCL and the raw CUDA
// driver API, side by side in one process (the evaluation of the CAF OpenCL actors paper).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/device_harness.hpp"
#include "troupe/kernel.hpp"

namespace troupe::bench::kernel_bench {

/// The matrix multiply of the paper, in both languages: c = a · b, n × n floats, one work item
/// per element of c, bounds checked (CUDA grids are rounded up to whole blocks).
extern const troupe::kernel::source matmul_source;
/// A kernel that does nothing with its buffer: the cost of a pipeline stage.
extern const troupe::kernel::source empty_source;

/// Small whole numbers: every product and sum is exact in float, so results compare exactly.
std::vector<float> matrix(std::size_t n, unsigned seed);

/// Empty when `c` = a · b at a fresh random sample each call, a whole row and 256 elements (the
/// whole product costs the CPU too much at the large sizes); else the first difference.
std::string check_product(const std::vector<float>& a, const std::vector<float>& b, const float* c,
                          std::size_t n);

/// Which Mandelbrot splits to run: fixed shares by tens of percent offloaded, and the automatic
/// one. The large image's may then be run in parts.
struct split_selection {
  std::array<bool, 11> percents{};  // 0 %, 10 %, ..., 100 %
  bool automatic = false;
};
/// From "0,10,auto" (--shares); empty selects all. Throws usage_error naming a bad item.
split_selection parse_split_selection(const std::string& list);

/// Throws usage_error unless `name` ("1920x1080x100") is one of the paper's four images.
void check_mandelbrot_image(const std::string& name);

/// The heterogeneous Mandelbrot: fixed shares offloaded to a kernel actor on `dev`, the rest on
/// CPU actors, and the automatic split (mandelbrot.cpp). `images` ("1920x1080x100") narrows the
/// paper's four images; empty runs them all.
void run_mandelbrot(device_bench& bench, troupe::actor_system& system, const troupe::device& dev,
                    const device_label& label, bool gpu, const std::vector<std::string>& images,
                    const split_selection& splits);

/// The WAH index built by kernel actors on `dev` against the host (wah_build.cpp). `only`
/// replaces the column sizes (10k to 20M); empty keeps them.
void run_wah_build(device_bench& bench, troupe::actor_system& system, const troupe::device& dev,
                   const device_label& label, bool gpu, const std::vector<std::size_t>& only);

/// The same benchmarks against one API on one device.
class native_side {
 public:
  virtual ~native_side() = default;

  /// One request as a first program does it: allocate a, b and c, write a and b, launch, read c
  /// back (pageable memory, blocking calls), free: native-naive.
  virtual device_variant matmul_request(std::shared_ptr<const std::vector<float>> a,
                                        std::shared_ptr<const std::vector<float>> b,
                                        std::size_t n) = 0;
  /// One request as a competent user writes it: device buffers kept across requests, a and b
  /// kept in pinned host memory, asynchronous writes, launch and read of c into pinned memory,
  /// one synchronization: native-tuned. Troupe's request does more: it takes a and b in vectors
  /// of pageable memory and answers with c in one, so it copies them through pinned blocks.
  virtual device_variant matmul_request_tuned(std::shared_ptr<const std::vector<float>> a,
                                              std::shared_ptr<const std::vector<float>> b,
                                              std::size_t n) = 0;
  /// `iterations` multiplies of a and b (on the device), each reading c back into pageable
  /// memory; the next starts from the completion of the one before: native-naive.
  virtual device_variant matmul_iterated(std::shared_ptr<const std::vector<float>> a,
                                         std::shared_ptr<const std::vector<float>> b, std::size_t n,
                                         int iterations) = 0;
  /// The same with c read back asynchronously into pinned memory and waited for, the next
  /// multiply launched once it is there, the last c copied out: native-tuned.
  virtual device_variant matmul_iterated_tuned(std::shared_ptr<const std::vector<float>> a,
                                               std::shared_ptr<const std::vector<float>> b,
                                               std::size_t n, int iterations) = 0;
  /// `stages` launches of the empty kernel on one buffer of `count` floats, then a finish.
  /// Before each run, untimed, one launch and a finish. The sides alternate, and in OpenCL each
  /// has its own context: on an H200 through NVIDIA's OpenCL, 20 launches right after another
  /// context's work took 8.4-8.6 us each, against 4.4-5.9 otherwise (the GPU switching contexts),
  /// which a program with one context does not pay. troupe's side does the same
  /// (bench_kernel.cpp).
  virtual device_variant empty_stages(std::size_t count, int stages) = 0;
  /// The same with each launch flushed, as a runtime must that cannot know whether another launch
  /// follows (troupe flushes each one), where the API has a flush (OpenCL): native-<api>-flush.
  /// None elsewhere.
  virtual std::optional<device_variant> flushed_empty_stages(std::size_t, int) {
    return std::nullopt;
  }
};

/// The native side of a device (`ordinal`-th of its backend); null with `why` set when it cannot
/// be opened.
std::unique_ptr<native_side> open_native(const troupe::device& device, std::size_t ordinal,
                                         std::string& why);

}  // namespace troupe::bench::kernel_bench
