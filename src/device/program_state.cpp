#include "troupe/device/detail/program_state.hpp"

#include "device/backend.hpp"

namespace troupe::detail {

program_state::program_state(intrusive_ptr<device_state> device,
                             std::unique_ptr<backend_program> backend, bool from_cache)
    : device_(std::move(device)), backend_(std::move(backend)), from_cache_(from_cache) {}

program_state::~program_state() {
  kernels_.clear();  // before the program they belong to
}

backend_kernel& program_state::kernel(const std::string& name) {
  std::lock_guard guard{mutex_};
  auto found = kernels_.find(name);
  if (found == kernels_.end()) found = kernels_.emplace(name, backend_->kernel(name)).first;
  return *found->second;
}

}  // namespace troupe::detail
