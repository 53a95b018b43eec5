// The heterogeneous Mandelbrot of the CAF OpenCL actors paper: the image is split by rows
// between a kernel actor (the first rows) and CPU actors (the rest), at fixed shares of 0 to 100 %
// offloaded, and at the share a balancer finds from the measured speed of both sides.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "kernel/kernel_bench.hpp"
#include "troupe/support/stage_trace.hpp"

namespace troupe::bench::kernel_bench {

namespace {

using namespace troupe::kernel;
using u32 = std::uint32_t;
using clock_type = std::chrono::steady_clock;
namespace stage_trace = troupe::detail::stage_trace;

// The paper's region, [-0.5 - 0.7375i, 0.1 - 0.1375i].
constexpr float region_x0 = -0.5f, region_y0 = -0.7375f, region_x1 = 0.1f, region_y1 = -0.1375f;

// FADD/FMUL are never fused into FMAs, and the host code below is compiled in ISO mode (no
// contraction either): both sides compute the same floats, so the counts compare exactly.
constexpr const char* mandelbrot_body = R"(
KERNEL void mandelbrot(GLOBAL u32* counts, u32 width, u32 first_row, u32 rows, u32 iterations,
                       float x0, float y0, float dx, float dy) {
  u32 i = GLOBAL_ID;
  if (i >= width * rows) return;
  float cr = FADD(x0, FMUL((float)(i % width), dx));
  float ci = FADD(y0, FMUL((float)(first_row + i / width), dy));
  float x = 0.0f, y = 0.0f;
  u32 n = 0;
  for (; n < iterations; ++n) {
    float x2 = FMUL(x, x), y2 = FMUL(y, y);
    if (FADD(x2, y2) > 4.0f) break;
    y = FADD(FMUL(FADD(x, x), y), ci);
    x = FADD(FSUB(x2, y2), cr);
  }
  counts[i] = n;
}
)";

struct image {
  u32 width = 0, height = 0, iterations = 0;
  float dx() const { return (region_x1 - region_x0) / static_cast<float>(width); }
  float dy() const { return (region_y1 - region_y0) / static_cast<float>(height); }
};

/// The paper's four images.
std::vector<image> paper_images() {
  return {{1920, 1080, 100}, {1920, 1080, 1000}, {16000, 16000, 100}, {16000, 16000, 1000}};
}

/// The paper's 16000x16000 images: a rendering takes from a tenth of a second to half a minute.
bool is_large(const image& img) {
  return img.width > 4000;
}

/// "1920x1080x100", as --mandelbrot names an image.
std::string name_of(const image& img) {
  return std::to_string(img.width) + "x" + std::to_string(img.height) + "x" +
         std::to_string(img.iterations);
}

/// The host's computation of rows [first_row, first_row + rows), as the kernel computes them.
std::vector<u32> rows_on_host(const image& img, u32 first_row, u32 rows) {
  std::vector<u32> counts(static_cast<std::size_t>(img.width) * rows);
  const float dx = img.dx(), dy = img.dy();
  for (u32 r = 0; r < rows; ++r) {
    const float ci = region_y0 + static_cast<float>(first_row + r) * dy;
    for (u32 col = 0; col < img.width; ++col) {
      const float cr = region_x0 + static_cast<float>(col) * dx;
      float x = 0.0f, y = 0.0f;
      u32 n = 0;
      for (; n < img.iterations; ++n) {
        const float x2 = x * x, y2 = y * y;
        if (x2 + y2 > 4.0f) break;
        y = (x + x) * y + ci;
        x = (x2 - y2) + cr;
      }
      counts[static_cast<std::size_t>(r) * img.width + col] = n;
    }
  }
  return counts;
}

/// Timed runs per variant, at the least, of an image that is not large, where the automatic split
/// meets the best fixed one (compare_with_best_split). A 1920x1080 rendering takes 1 to 2 ms on an
/// H100 and its runs spread by about 30 %: with 100 runs a side, the two medians of one split
/// (both all on the device) came out 5.3 % apart once in 36 comparisons.
constexpr int fast_image_runs = 400;

std::size_t host_actors(const actor_system& system) {
  return std::max<std::size_t>(1, system.settings().threads - 1);
}

/// One rendering: the device's rows first, then the host's in bands, with each side's time.
struct rendering {
  u32 device_rows = 0;
  std::vector<u32> device_counts;
  std::vector<std::pair<u32, std::vector<u32>>> host_bands;  // (first row, counts)
  double device_seconds = 0, host_seconds = 0;
};

class renderer {
 public:
  renderer(actor_system& system, const troupe::device& dev, image img) : img_(img) {
    using inputs = std::tuple<nd_range, u32, u32>;
    kernel_ = system.spawn_kernel(
        portable_source(mandelbrot_body), "mandelbrot", nd_range{{1}}, on(dev),
        map_input([width = img.width](u32 first_row, u32 rows) -> std::optional<inputs> {
          // A fixed work-group size (widths are multiples of 64): PoCL compiles a kernel
          // once per size it picks, and it would pick another for every share.
          return inputs{nd_range{{static_cast<std::size_t>(width) * rows}, {64}}, first_row, rows};
        }),
        out<u32>{}, priv<u32>{img.width}, priv<u32, val>{}, priv<u32, val>{},
        priv<u32>{img.iterations}, priv<float>{region_x0}, priv<float>{region_y0},
        priv<float>{img.dx()}, priv<float>{img.dy()});
    // One CPU actor per worker thread but one: continuations of device commands (the kernel
    // actor's response) run on the workers, and with every worker computing rows they would
    // wait for one. Each actor takes several bands, so that costly rows spread.
    for (std::size_t i = 0; i < host_actors(system); ++i) {
      host_actors_.push_back(system.spawn(
          [img](u32 first_row, u32 rows) { return rows_on_host(img, first_row, rows); }));
    }
  }

  const image& spec() const noexcept { return img_; }

  rendering render(u32 device_rows) const {
    stage_trace::record(stage_trace::point::run_begin);  // stage_trace.py --stages 0
    rendering result;
    result.device_rows = device_rows;
    const auto start = clock_type::now();
    auto seconds_since_start = [start] {
      return std::chrono::duration<double>(clock_type::now() - start).count();
    };
    future<void> device_done = make_ready_future();
    if (device_rows > 0) {
      device_done = request<std::vector<u32>>(kernel_, u32{0}, device_rows)
                        .then(inline_execution, [&result, seconds_since_start](std::vector<u32> c) {
                          result.device_counts = std::move(c);
                          result.device_seconds = seconds_since_start();
                        });
    }
    const u32 host_rows = img_.height - device_rows;
    const u32 bands = std::min<u32>(host_rows, static_cast<u32>(8 * host_actors_.size()));
    std::vector<future<std::vector<u32>>> parts;
    for (u32 b = 0; b < bands; ++b) {
      const u32 first = device_rows + host_rows * b / bands;
      const u32 end = device_rows + host_rows * (b + 1) / bands;
      parts.push_back(
          request<std::vector<u32>>(host_actors_[b % host_actors_.size()], first, end - first));
      result.host_bands.emplace_back(first, std::vector<u32>{});
    }
    auto all = when_all(std::move(parts)).get();
    result.host_seconds = seconds_since_start();
    std::move(device_done).get();
    for (std::size_t b = 0; b < all.size(); ++b) result.host_bands[b].second = all[b].get();
    stage_trace::record(stage_trace::point::waiter_done);
    return result;
  }

  /// Empty when the first and last rows, the two on either side of the split, and 16 rows
  /// sampled afresh each call match the host's computation.
  std::string check(const rendering& done) const {
    std::mt19937 random(std::random_device{}());
    std::vector<u32> rows{0, img_.height - 1};
    if (done.device_rows > 0) rows.push_back(done.device_rows - 1);
    if (done.device_rows < img_.height) rows.push_back(done.device_rows);
    for (int i = 0; i < 16; ++i) rows.push_back(static_cast<u32>(random() % img_.height));
    for (u32 row : rows) {
      const u32* got = nullptr;
      if (row < done.device_rows) {
        if (done.device_counts.size() != std::size_t{done.device_rows} * img_.width)
          return "the device's rows have the wrong size";
        got = done.device_counts.data() + std::size_t{row} * img_.width;
      } else {
        for (const auto& [first, counts] : done.host_bands) {
          if (row >= first && std::size_t{row - first} * img_.width < counts.size())
            got = counts.data() + std::size_t{row - first} * img_.width;
        }
      }
      if (got == nullptr) return "row " + std::to_string(row) + " is missing";
      const auto expected = rows_on_host(img_, row, 1);
      for (u32 col = 0; col < img_.width; ++col) {
        if (got[col] != expected[col]) {
          return "pixel (" + std::to_string(col) + ", " + std::to_string(row) + ") took " +
                 std::to_string(got[col]) + " iterations, expected " +
                 std::to_string(expected[col]);
        }
      }
    }
    return {};
  }

 private:
  image img_;
  actor kernel_;
  std::vector<actor> host_actors_;
};

/// The automatic split. A model proposes: from the renderings so far it learns (their medians)
/// the device's seconds per row and the host's seconds per row per actor, and proposes the
/// number of host rows, a multiple of its actor count, that minimises the later of the two
/// finishing times (host rows are computed `actors` at a time, so a share too small to occupy
/// them all takes a whole row's time). The host gets rows only where that is predicted 5 %
/// faster than none.
///
/// Measurement decides. The model errs where rows differ in cost (the image's top rows are
/// cheap), and where busy host actors slow the device's own host work (staging copies, the
/// completion thread), so every split tried keeps its measured times. The first rendering splits
/// at half, the second follows the model, the third puts all on the device; from then on the
/// split with the fastest median runs again, unless the model proposes one that is not near any
/// tried and that it predicts 5 % faster. Medians, because one rendering in tens takes several
/// times as long (fresh memory for the result, a worker's wake-up): a running average let one
/// of them rule a split out for good, and the model propose one split after another. For the
/// same reason a split measured fewer than `settled` times that the model predicts 5 % faster
/// than the best is measured again.
class granular_split {
 public:
  granular_split(u32 actors, u32 height) : actors_(std::max(1u, actors)), height_(height) {}

  u32 device_rows() const {
    if (measured_.empty()) return height_ / 2;
    const u32 proposal = proposed();
    if (measured_.size() == 1) return proposal;
    if (!measured_.contains(height_)) return height_;
    const auto best = std::min_element(measured_.begin(), measured_.end(), [](auto& a, auto& b) {
      return a.second.median() < b.second.median();
    });
    const double best_seconds = best->second.median();
    for (const auto& [rows, times] : measured_) {
      if (times.seconds.size() < settled && predicted(rows) < 0.95 * best_seconds) return rows;
    }
    const bool worth_a_try = !tried_near(proposal) && predicted(proposal) < 0.95 * best_seconds;
    return worth_a_try ? proposal : best->first;
  }

  void learn(const rendering& done) {
    const u32 host_rows = height_ - done.device_rows;
    if (done.device_rows > 0) device_row_.add(done.device_seconds / done.device_rows);
    if (host_rows > 0) {
      const double rounds = std::ceil(static_cast<double>(host_rows) / actors_);
      host_row_.add(done.host_seconds / rounds);
    }
    measured_[done.device_rows].add(std::max(done.device_seconds, done.host_seconds));
  }

 private:
  static constexpr std::size_t settled = 3;

  /// Seconds measured, kept sorted: the median is at hand when a timed run chooses its split.
  struct samples {
    std::vector<double> seconds;

    void add(double measured) {
      seconds.insert(std::upper_bound(seconds.begin(), seconds.end(), measured), measured);
    }
    /// 0 while there are none.
    double median() const { return seconds.empty() ? 0 : seconds[seconds.size() / 2]; }
  };

  /// The model's split, as device rows.
  u32 proposed() const {
    if (device_row_.seconds.empty() || host_row_.seconds.empty()) return height_ / 2;
    u32 best_host_rows = 0;
    double best = predicted(height_) * 0.95;
    for (u32 host_rows = actors_; host_rows <= height_; host_rows += actors_) {
      const double time = predicted(height_ - host_rows);
      if (time < best) {
        best = time;
        best_host_rows = host_rows;
      }
    }
    return height_ - best_host_rows;
  }
  double predicted(u32 device_rows) const {
    const u32 host_rows = height_ - device_rows;
    const double device = device_rows * device_row_.median();
    const double host = std::ceil(static_cast<double>(host_rows) / actors_) * host_row_.median();
    return std::max(device, host);
  }
  /// Whether a split within 2 % of the rows (or one round of the host) was measured.
  bool tried_near(u32 device_rows) const {
    const u32 near = std::max(actors_, height_ / 50);
    const u32 from = device_rows > near ? device_rows - near : 0;
    auto at = measured_.lower_bound(from);
    return at != measured_.end() && at->first <= device_rows + near;
  }

  u32 actors_, height_;
  samples device_row_;               // per rendering: the device's seconds per row
  samples host_row_;                 // per rendering: the host's seconds per row and actor
  std::map<u32, samples> measured_;  // device rows -> seconds of its renderings
};

}  // namespace

void check_mandelbrot_image(const std::string& name) {
  std::string known;
  for (const image& img : paper_images()) {
    if (name_of(img) == name) return;
    known += (known.empty() ? "" : ", ") + name_of(img);
  }
  throw usage_error("--mandelbrot: '" + name + "' is not one of the paper's images (" + known +
                    ")");
}

split_selection parse_split_selection(const std::string& list) {
  split_selection chosen;
  if (list.empty()) {
    chosen.percents.fill(true);
    chosen.automatic = true;
    return chosen;
  }
  std::size_t from = 0;
  while (from <= list.size()) {
    const std::size_t comma = std::min(list.find(',', from), list.size());
    const std::string item = list.substr(from, comma - from);
    from = comma + 1;
    if (item == "auto") {
      chosen.automatic = true;
      continue;
    }
    const bool digits =
        !item.empty() && item.size() <= 3 &&
        std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    const int percent = digits ? std::stoi(item) : -1;
    if (percent < 0 || percent > 100 || percent % 10 != 0)
      throw usage_error("--shares: '" + item +
                        "' is neither 'auto' nor a percent of 0, 10, ..., 100");
    chosen.percents[static_cast<std::size_t>(percent / 10)] = true;
  }
  return chosen;
}

namespace {

device_variant fixed_split(const std::shared_ptr<renderer>& paint,
                           const std::shared_ptr<rendering>& done, int percent) {
  const auto device_rows = static_cast<u32>(std::size_t{paint->spec().height} * percent / 100);
  device_variant fixed;
  fixed.name = "troupe-offload-" + std::to_string(percent);
  fixed.prepare = [done] { *done = {}; };
  fixed.run = [paint, done, device_rows] { *done = paint->render(device_rows); };
  fixed.check = [paint, done] { return paint->check(*done); };
  return fixed;
}

/// The automatic split's variant, and the device rows of each of its renderings so far.
struct learning_split {
  device_variant variant;
  std::shared_ptr<std::vector<u32>> splits;
};

learning_split automatic_split(const std::shared_ptr<renderer>& paint,
                               const std::shared_ptr<rendering>& done, std::size_t actors) {
  const u32 height = paint->spec().height;
  auto split = std::make_shared<granular_split>(static_cast<u32>(actors), height);
  auto splits = std::make_shared<std::vector<u32>>();
  device_variant variant;
  variant.name = "troupe-auto";
  variant.prepare = [done] { *done = {}; };
  variant.run = [paint, done, split, splits] {
    splits->push_back(split->device_rows());
    *done = paint->render(splits->back());
    split->learn(*done);
  };
  variant.check = [paint, done] { return paint->check(*done); };
  return {std::move(variant), std::move(splits)};
}

/// The automatic split, learning afresh, against the best fixed split of the sweep `swept`, the
/// two alternating: the target compares their medians. In the sweep each variant follows the
/// same one every time, and what ran before moves a millisecond's rendering (the allocator's
/// state for the result vector): at 1920x1080 the automatic split came out 13 to 15 % faster
/// than the same split fixed, right after it. A 1920x1080 rendering's runs spread by about 30 %,
/// so those images run fast_image_runs times a variant here. The automatic split learns in
/// its warm-up (half, the model's proposal, all on the device); the runs it spends exploring
/// later are timed, and counted.
void compare_with_best_split(device_bench& bench, const comparison& swept,
                             const std::shared_ptr<renderer>& paint, std::size_t actors,
                             int best_percent) {
  comparison duel{.benchmark = "mandelbrot_split",
                  .parameters = swept.parameters,
                  .device = swept.device,
                  .runs = is_large(paint->spec()) || bench.quick()
                              ? 0
                              : std::max(bench.settings().runs, fast_image_runs),
                  .warmup = std::max(bench.settings().warmup, 3)};
  auto done = std::make_shared<rendering>();
  duel.variants.push_back(fixed_split(paint, done, best_percent));
  auto learning = automatic_split(paint, done, actors);
  duel.variants.push_back(learning.variant);
  const std::string best_name = duel.variants.front().name;
  duel.ratios.emplace_back("troupe-auto", best_name);
  auto measured = bench.compare(duel);
  const auto& fixed = measured.front();
  const auto& autos = measured.back();
  if (!fixed.ok || !autos.ok || fixed.seconds.empty() || autos.seconds.empty()) return;
  const auto& splits = *learning.splits;
  const u32 last = splits.back();
  const auto timed = std::min(splits.size(), autos.seconds.size());
  const auto elsewhere = std::count_if(splits.end() - static_cast<std::ptrdiff_t>(timed),
                                       splits.end(), [last](u32 rows) { return rows != last; });
  std::printf(
      "  automatic split: %.1f %% offloaded, %.3f x the best fixed split (%s); %zu of its %zu "
      "timed runs split otherwise\n\n",
      100.0 * last / paint->spec().height, autos.median() / fixed.median(), best_name.c_str(),
      static_cast<std::size_t>(elsewhere), static_cast<std::size_t>(timed));
}

}  // namespace

void run_mandelbrot(device_bench& bench, actor_system& system, const troupe::device& dev,
                    const device_label& label, bool gpu, const std::vector<std::string>& only,
                    const split_selection& chosen) {
  if (!bench.selected("mandelbrot")) return;
  if (!gpu && !bench.quick()) {
    bench.skip("mandelbrot", label.name,
               "on a CPU device the kernel actor shares the cores of "
               "the CPU actors (a smoke run with --quick only)");
    return;
  }
  std::vector<image> images = paper_images();
  if (!only.empty()) {
    std::erase_if(images, [&](const image& img) {
      return std::find(only.begin(), only.end(), name_of(img)) == only.end();
    });
  }
  if (bench.quick()) images = {{192, 108, 100}};
  for (const image& img : images) {
    auto paint = std::make_shared<renderer>(system, dev, img);
    const bool large = is_large(img);
    // The large image takes seconds a run wherever the host has rows (half a minute at 0 % and
    // 1000 iterations): then fewer runs. All on the device, and the automatic split (its first
    // run, at half, is its warm-up), get the usual number.
    const bool slow_splits =
        large && std::any_of(chosen.percents.begin(), chosen.percents.end() - 1,
                             [](bool selected) { return selected; });
    comparison rows{.benchmark = "mandelbrot",
                    .parameters = "width=" + std::to_string(img.width) +
                                  ";height=" + std::to_string(img.height) +
                                  ";iterations=" + std::to_string(img.iterations) +
                                  ";host_actors=" + std::to_string(host_actors(system)),
                    .device = label,
                    .runs = slow_splits ? (img.iterations > 100 ? 2 : 3) : 0,
                    .warmup = large ? 1 : 0};
    auto done = std::make_shared<rendering>();
    std::vector<int> fixed_percents;
    for (int percent = 0; percent <= 100; percent += 10) {
      if (!chosen.percents[static_cast<std::size_t>(percent / 10)]) continue;
      fixed_percents.push_back(percent);
      rows.variants.push_back(fixed_split(paint, done, percent));
    }
    if (chosen.automatic)
      rows.variants.push_back(automatic_split(paint, done, host_actors(system)).variant);
    auto measured = bench.compare(rows);
    if (!chosen.automatic) continue;

    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < fixed_percents.size(); ++i) {
      if (!measured[i].ok || measured[i].seconds.empty()) continue;
      if (!best || measured[i].median() < measured[*best].median()) best = i;
    }
    if (best)
      compare_with_best_split(bench, rows, paint, host_actors(system), fixed_percents[*best]);
  }
}

}  // namespace troupe::bench::kernel_bench
