// mandelbrot: frames of growing size, each computed, read back and written as a PNG.
// troupe-sync does one step after the other; troupe-async writes frame k's PNG while frame k+1
// computes, which futures make a few lines. The native baseline runs synchronously, for
// reference.
#include <png.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "device/benchmarks.hpp"
#include "device/kernels.hpp"

namespace troupe::bench {
namespace {

// Frames per run: a zoom from the whole set into the seahorse valley.
constexpr std::size_t frame_count = 4;
// The share of pixels that may differ from the CPU reference (float rounding at the boundary).
constexpr double tolerated_share = 0.001;

std::vector<view> zoom(unsigned width, unsigned height) {
  std::vector<view> frames;
  for (std::size_t frame = 0; frame < frame_count; ++frame) {
    const double progress = static_cast<double>(frame) / (frame_count - 1);
    const double centre_x = -0.75 + (-0.743643887 + 0.75) * progress;
    const double centre_y = 0.131825904 * progress;
    const double extent = 3.0 / std::pow(4.0, static_cast<double>(frame));
    const double step = extent / width;
    frames.push_back({static_cast<float>(centre_x - extent / 2),
                      static_cast<float>(centre_y - step * height / 2), static_cast<float>(step)});
  }
  return frames;
}

// The kernel's arithmetic and colours on the CPU, operation for operation (no fused
// multiply-adds: C++20 without extensions keeps float expressions as written).
void reference_row(const view& shown, unsigned width, unsigned row, std::uint8_t* rgb) {
  for (unsigned column = 0; column < width; ++column) {
    const float cx = shown.x0 + static_cast<float>(column) * shown.step;
    const float cy = shown.y0 + static_cast<float>(row) * shown.step;
    float x = 0.0f;
    float y = 0.0f;
    unsigned iterations = 0;
    while (iterations < 256u && x * x + y * y <= 4.0f) {
      const float next = x * x - y * y + cx;
      y = 2.0f * x * y + cy;
      x = next;
      ++iterations;
    }
    const bool inside = iterations == 256u;
    std::uint8_t* pixel = rgb + std::size_t{3} * column;
    pixel[0] = static_cast<std::uint8_t>(iterations & 255u);
    pixel[1] = inside ? 0 : static_cast<std::uint8_t>(std::min(iterations * 4u, 255u));
    pixel[2] = inside ? 0 : static_cast<std::uint8_t>(std::min(64u + iterations * 8u, 255u));
  }
}

// Every frame of `frames` on the CPU, rows shared among the hardware threads.
std::vector<std::vector<std::uint8_t>> reference(const std::vector<view>& frames, unsigned width,
                                                 unsigned height) {
  std::vector<std::vector<std::uint8_t>> images(
      frames.size(), std::vector<std::uint8_t>(std::size_t{3} * width * height));
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (unsigned worker = 0; worker < workers; ++worker) {
    threads.emplace_back([&, worker] {
      for (std::size_t frame = 0; frame < frames.size(); ++frame)
        for (unsigned row = worker; row < height; row += workers)
          reference_row(frames[frame], width, row,
                        images[frame].data() + std::size_t{3} * width * row);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return images;
}

// Writes an 8-bit RGB PNG; libpng's fast compression, so the PNG is not all there is to time.
void write_png(const std::filesystem::path& file, std::span<const std::uint8_t> rgb, unsigned width,
               unsigned height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = PNG_FORMAT_RGB;
  image.flags = PNG_IMAGE_FLAG_FAST;
  if (!png_image_write_to_file(&image, file.c_str(), 0, rgb.data(), 0, nullptr))
    throw std::runtime_error("cannot write " + file.string() + ": " + image.message);
}

// The PNG folder and the files written into it, removed at the end unless they are to be kept.
class png_folder {
 public:
  explicit png_folder(const png_settings& settings) : keep_(settings.keep) {
    folder_ = settings.folder;
    if (folder_.empty()) {
      folder_ = std::filesystem::temp_directory_path() /
                ("troupe-bench-device-" + std::to_string(::getpid()));
      made_ = true;
    }
    std::filesystem::create_directories(folder_);
  }
  ~png_folder() {
    if (keep_) {
      std::printf("mandelbrot: PNGs kept in %s\n", folder_.c_str());
      return;
    }
    std::error_code ignored;
    for (const std::filesystem::path& file : written_) std::filesystem::remove(file, ignored);
    if (made_) std::filesystem::remove(folder_, ignored);
  }
  png_folder(const png_folder&) = delete;
  png_folder& operator=(const png_folder&) = delete;

  /// Saves one frame; thread-safe, as troupe-async saves while other work runs.
  void save(std::span<const std::uint8_t> rgb, unsigned width, unsigned height, std::size_t frame,
            const std::string& variant) {
    std::filesystem::path file =
        folder_ / (variant + "-" + std::to_string(width) + "x" + std::to_string(height) + "-" +
                   std::to_string(frame) + ".png");
    write_png(file, rgb, width, height);
    std::lock_guard lock(mutex_);
    written_.insert(file);
  }

 private:
  std::filesystem::path folder_;
  bool keep_;
  bool made_ = false;
  std::mutex mutex_;
  std::set<std::filesystem::path> written_;
};

// troupe's side; `overlapped` writes frame k's PNG while frame k+1 computes.
device_variant troupe_mandelbrot(const std::string& name, const troupe::device& device,
                                 const mandelbrot_problem& problem, bool overlapped) {
  return guarded(name, [&] {
    const std::size_t bytes = std::size_t{3} * problem.width * problem.height;
    struct state {
      troupe::device device;
      troupe::program program;
      troupe::buffer<std::uint8_t> image;
      mandelbrot_problem problem;
      std::vector<std::vector<std::uint8_t>> frames;
    };
    auto run = std::make_shared<state>(
        state{device,
              device
                  .compile(kernels::mandelbrot.text(device.backend()),
                           kernels::mandelbrot.options(device.backend()))
                  .get(),
              device.allocate<std::uint8_t>(bytes), problem,
              std::vector<std::vector<std::uint8_t>>(problem.frames.size(),
                                                     std::vector<std::uint8_t>(bytes))});
    // Frame `index`: the launch and the read after it, as one future.
    auto render = [run](std::size_t index) {
      const mandelbrot_problem& frames = run->problem;
      const view& shown = frames.frames[index];
      auto computed = run->device.launch(
          run->program, kernels::mandelbrot.name, troupe::nd_range{{frames.width, frames.height}},
          run->image, frames.width, frames.height, shown.x0, shown.y0, shown.step);
      return run->image.read_into(std::span<std::uint8_t>(run->frames[index]),
                                  troupe::after(computed));
    };
    device_variant variant;
    variant.prepare = [run] {
      for (auto& frame : run->frames) std::fill(frame.begin(), frame.end(), std::uint8_t{0});
    };
    if (overlapped) {
      variant.run = [run, render, name] {
        const std::size_t frames = run->frames.size();
        troupe::future<void> pending = render(0);
        for (std::size_t index = 0; index < frames; ++index) {
          pending.get();
          // The next frame is under way on the device while this one is written.
          troupe::future<void> next =
              index + 1 < frames ? render(index + 1) : troupe::future<void>{};
          run->problem.save(run->frames[index], index, name);
          pending = std::move(next);
        }
      };
    } else {
      variant.run = [run, render, name] {
        for (std::size_t index = 0; index < run->frames.size(); ++index) {
          render(index).get();
          run->problem.save(run->frames[index], index, name);
        }
      };
    }
    variant.check = [run] { return run->problem.check_all(run->frames); };
    return variant;
  });
}

}  // namespace

void run_mandelbrot(device_bench& bench, const std::vector<target>& targets,
                    const png_settings& png) {
  if (!bench.selected("mandelbrot")) return;
  png_folder folder(png);
  for (const target& under_test : targets) {
    // On a CPU device a 4096x4096 set of frames takes about 20 s, and its 36 runs 11 minutes
    // (2 cores of an EPYC) with nothing to show that 2048x2048 does not.
    const unsigned largest = bench.quick()        ? (under_test.small() ? 512 : 1024)
                             : under_test.small() ? 2048
                                                  : 4096;
    for (unsigned side = 512; side <= largest; side *= 2) {
      const unsigned width = side;
      const unsigned height = side;
      const std::size_t bytes = std::size_t{3} * width * height;
      const std::vector<view> frames = zoom(width, height);
      const std::vector<std::vector<std::uint8_t>> expected = reference(frames, width, height);

      mandelbrot_problem problem;
      problem.width = width;
      problem.height = height;
      problem.frames = frames;
      problem.save = [&folder, width, height](std::span<const std::uint8_t> rgb, std::size_t frame,
                                              const std::string& variant) {
        folder.save(rgb, width, height, frame, variant);
      };
      problem.check = [&expected](std::span<const std::uint8_t> rgb,
                                  std::size_t frame) -> std::string {
        // Float rounding may move a pixel near the set's boundary by an iteration; allow a few.
        const std::vector<std::uint8_t>& want = expected[frame];
        std::size_t differing = 0;
        for (std::size_t pixel = 0; pixel < want.size(); pixel += 3)
          differing +=
              !std::equal(want.begin() + pixel, want.begin() + pixel + 3, rgb.begin() + pixel);
        const std::size_t pixels = want.size() / 3;
        if (static_cast<double>(differing) < tolerated_share * static_cast<double>(pixels))
          return {};
        return "frame " + std::to_string(frame) + ": " + std::to_string(differing) + " of " +
               std::to_string(pixels) + " pixels differ from the CPU reference";
      };

      comparison rows{.benchmark = "mandelbrot",
                      .parameters = "image=" + std::to_string(width) + "x" +
                                    std::to_string(height) + ";frames=" +
                                    std::to_string(frame_count) + ";bytes=" + std::to_string(bytes),
                      .device = under_test.label()};
      rows.variants.push_back(troupe_mandelbrot("troupe-sync", under_test.device, problem, false));
      rows.variants.push_back(troupe_mandelbrot("troupe-async", under_test.device, problem, true));
      if (under_test.native) {
        rows.variants.push_back(under_test.native->mandelbrot(problem));
        rows.ratios = {{"troupe-sync", rows.variants.back().name},
                       {"troupe-async", rows.variants.back().name}};
      }
      rows.ratios.emplace_back("troupe-async", "troupe-sync");
      bench.compare(rows);
    }
  }
}

}  // namespace troupe::bench
