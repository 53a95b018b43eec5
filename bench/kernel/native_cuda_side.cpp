// The native side of bench-kernel on CUDA: the driver API, as a program using it alone would.
#include <cstring>

#include "device/native_cuda.hpp"
#include "kernel/kernel_bench.hpp"

namespace troupe::bench::kernel_bench {
namespace {

constexpr unsigned tile = 16;  // 16 x 16 threads per block, on both sides

class cuda_side final : public native_side {
 public:
  explicit cuda_side(int ordinal) : device_(ordinal) {}

  device_variant matmul_request(std::shared_ptr<const std::vector<float>> a,
                                std::shared_ptr<const std::vector<float>> b,
                                std::size_t n) override {
    return guarded("native-naive", [&] {
      auto run = std::make_shared<state>(device_, matmul_source.cuda, "m_mult");
      run->result.resize(n * n);
      device_variant variant;
      variant.prepare = [run] { std::fill(run->result.begin(), run->result.end(), -1.0f); };
      variant.run = [run, a, b, n] {
        const auto& api = cuda::functions();
        run->owner.make_current();
        const std::size_t bytes = n * n * sizeof(float);
        cuda::device_memory da(run->owner, bytes), db(run->owner, bytes), dc(run->owner, bytes);
        cuda::check(api.cuMemcpyHtoD(da.get(), a->data(), bytes), "cuMemcpyHtoD");
        cuda::check(api.cuMemcpyHtoD(db.get(), b->data(), bytes), "cuMemcpyHtoD");
        launch_multiply(*run, da.get(), db.get(), dc.get(), n);
        cuda::check(api.cuMemcpyDtoH(run->result.data(), dc.get(), bytes), "cuMemcpyDtoH");
      };
      variant.check = [run, a, b, n] { return check_product(*a, *b, run->result.data(), n); };
      return variant;
    });
  }

  device_variant matmul_request_tuned(std::shared_ptr<const std::vector<float>> a,
                                      std::shared_ptr<const std::vector<float>> b,
                                      std::size_t n) override {
    return guarded("native-tuned", [&] {
      const std::size_t count = n * n, bytes = count * sizeof(float);
      auto run = multiply_state(n);
      // The matrices live in pinned memory, where a program that moves them often keeps them,
      // and the product lands there: no copy but the DMA, and one synchronization.
      struct pinned_matrices {
        pinned_matrices(const cuda::device& on, std::size_t count)
            : a(on, count), b(on, count), c(on, count) {}
        cuda::pinned_memory<float> a, b, c;
      };
      auto host = std::make_shared<pinned_matrices>(device_, count);
      std::memcpy(host->a.data(), a->data(), bytes);
      std::memcpy(host->b.data(), b->data(), bytes);
      device_variant variant;
      variant.prepare = [host, count] { std::fill(host->c.data(), host->c.data() + count, -1.0f); };
      variant.run = [run, host, n, bytes] {
        const auto& driver = cuda::functions();
        run->owner.make_current();
        CUstream stream = run->stream.get();
        cuda::check(driver.cuMemcpyHtoDAsync(run->a->get(), host->a.data(), bytes, stream),
                    "cuMemcpyHtoDAsync");
        cuda::check(driver.cuMemcpyHtoDAsync(run->b->get(), host->b.data(), bytes, stream),
                    "cuMemcpyHtoDAsync");
        launch_multiply(*run, run->a->get(), run->b->get(), run->c->get(), n);
        cuda::check(driver.cuMemcpyDtoHAsync(host->c.data(), run->c->get(), bytes, stream),
                    "cuMemcpyDtoHAsync");
        cuda::check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize");
      };
      variant.check = [host, a, b, n] { return check_product(*a, *b, host->c.data(), n); };
      return variant;
    });
  }

  device_variant matmul_iterated(std::shared_ptr<const std::vector<float>> a,
                                 std::shared_ptr<const std::vector<float>> b, std::size_t n,
                                 int iterations) override {
    return guarded("native-naive", [&] {
      // A host function may not call the driver: the next multiply starts once the copy of
      // the one before has returned.
      const std::size_t bytes = n * n * sizeof(float);
      auto run = multiply_state(n);
      run->result.resize(n * n);
      const auto& api = cuda::functions();
      cuda::check(api.cuMemcpyHtoD(run->a->get(), a->data(), bytes), "cuMemcpyHtoD");
      cuda::check(api.cuMemcpyHtoD(run->b->get(), b->data(), bytes), "cuMemcpyHtoD");
      device_variant variant;
      variant.prepare = [run] { std::fill(run->result.begin(), run->result.end(), -1.0f); };
      variant.run = [run, n, bytes, iterations] {
        const auto& driver = cuda::functions();
        run->owner.make_current();
        for (int iteration = 0; iteration < iterations; ++iteration) {
          launch_multiply(*run, run->a->get(), run->b->get(), run->c->get(), n);
          cuda::check(driver.cuMemcpyDtoH(run->result.data(), run->c->get(), bytes),
                      "cuMemcpyDtoH");
        }
      };
      variant.check = [run, a, b, n] { return check_product(*a, *b, run->result.data(), n); };
      return variant;
    });
  }

  device_variant matmul_iterated_tuned(std::shared_ptr<const std::vector<float>> a,
                                       std::shared_ptr<const std::vector<float>> b, std::size_t n,
                                       int iterations) override {
    return guarded("native-tuned", [&] {
      const std::size_t count = n * n, bytes = count * sizeof(float);
      auto run = multiply_state(n);
      run->result.resize(n * n);
      auto staged_c = std::make_shared<cuda::pinned_memory<float>>(device_, count);
      const auto& api = cuda::functions();
      cuda::check(api.cuMemcpyHtoD(run->a->get(), a->data(), bytes), "cuMemcpyHtoD");
      cuda::check(api.cuMemcpyHtoD(run->b->get(), b->data(), bytes), "cuMemcpyHtoD");
      device_variant variant;
      variant.prepare = [run] { std::fill(run->result.begin(), run->result.end(), -1.0f); };
      // Each product lands in pinned memory by an asynchronous copy, and the next multiply is
      // launched once it is there; the last one is copied out, as troupe's driver copies it.
      variant.run = [run, staged_c, n, bytes, iterations] {
        const auto& driver = cuda::functions();
        run->owner.make_current();
        CUstream stream = run->stream.get();
        for (int iteration = 0; iteration < iterations; ++iteration) {
          launch_multiply(*run, run->a->get(), run->b->get(), run->c->get(), n);
          cuda::check(driver.cuMemcpyDtoHAsync(staged_c->data(), run->c->get(), bytes, stream),
                      "cuMemcpyDtoHAsync");
          cuda::check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize");
        }
        std::memcpy(run->result.data(), staged_c->data(), bytes);
      };
      variant.check = [run, a, b, n] { return check_product(*a, *b, run->result.data(), n); };
      return variant;
    });
  }

  device_variant empty_stages(std::size_t count, int stages) override {
    return guarded("native-cuda", [&] {
      auto run = std::make_shared<state>(device_, empty_source.cuda, "empty");
      run->a = std::make_unique<cuda::device_memory>(run->owner, count * sizeof(float));
      const auto launch_stages = [run, count](int launches) {
        run->owner.make_current();
        const unsigned block = 256;
        for (int stage = 0; stage < launches; ++stage) {
          cuda::launch(run->function, run->stream.get(), {cuda::blocks_for(count, block), 1, 1},
                       {block, 1, 1}, run->a->get());
        }
        cuda::check(cuda::functions().cuStreamSynchronize(run->stream.get()),
                    "cuStreamSynchronize");
      };
      device_variant variant;
      variant.prepare = [launch_stages] { launch_stages(1); };
      variant.run = [launch_stages, stages] { launch_stages(stages); };
      variant.check = [] { return std::string{}; };  // each synchronize is checked for success
      return variant;
    });
  }

 private:
  struct state {
    state(const cuda::device& on, const std::string& source, const char* name)
        : owner(on), code(on, source, {}), function(code.function(name)), stream(on) {}
    const cuda::device& owner;
    cuda::module code;
    CUfunction function;
    cuda::stream stream;
    std::vector<float> result;
    std::unique_ptr<cuda::device_memory> a, b, c;
  };

  // The multiply's module and stream, and its device buffers a, b and c of n x n floats,
  // kept across runs.
  std::shared_ptr<state> multiply_state(std::size_t n) const {
    const std::size_t bytes = n * n * sizeof(float);
    auto run = std::make_shared<state>(device_, matmul_source.cuda, "m_mult");
    run->a = std::make_unique<cuda::device_memory>(run->owner, bytes);
    run->b = std::make_unique<cuda::device_memory>(run->owner, bytes);
    run->c = std::make_unique<cuda::device_memory>(run->owner, bytes);
    return run;
  }

  static void launch_multiply(state& run, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                              std::size_t n) {
    const unsigned blocks = cuda::blocks_for(n, tile);
    cuda::launch(run.function, run.stream.get(), {blocks, blocks, 1}, {tile, tile, 1}, a, b, c,
                 static_cast<unsigned>(n));
  }

  cuda::device device_;
};

}  // namespace

std::unique_ptr<native_side> open_cuda_side(int ordinal, std::string& why) {
  if (cuda::load(why) == nullptr) return nullptr;
  return std::make_unique<cuda_side>(ordinal);
}

}  // namespace troupe::bench::kernel_bench
