// discovery: which devices this machine has, and how to pick one. sys.devices() lists every
// OpenCL and CUDA device with what its driver reports; filters narrow the list and chain; a
// backend that offers no devices says why. front() of an empty selection throws an error that
// names the filters that matched nothing.
#include <iostream>
#include <string>
#include <utility>

#include "troupe/troupe.hpp"

using troupe::to_string;

int main(int argc, char** argv) {
  troupe::actor_system sys{troupe::config{argc, argv}};
  auto all = sys.devices();
  std::cout << all.size() << " device(s):\n";
  for (const auto& d : all) {
    const auto& info = d.info();
    std::cout << "  " << info.name << "\n    " << to_string(info.backend) << " "
              << to_string(info.type) << " by " << info.vendor << ", driver " << info.driver
              << "\n    " << info.global_memory / (1024 * 1024) << " MiB, " << info.compute_units
              << " compute units, work groups of up to " << info.max_work_group_size << ", "
              << (info.backend == troupe::backend::cuda
                      ? "compute capability " + to_string(info.compute_capability)
                      : "OpenCL " + to_string(info.opencl_version))
              << "\n";
  }
  for (const auto& u : all.unavailable())
    std::cout << "no " << to_string(u.backend) << " devices: " << u.reason << "\n";

  auto show = [](const std::string& filter, const troupe::device_selection& selected) {
    std::cout << "devices()." << filter << ": " << selected.size();
    const char* separator = " - ";
    for (const auto& d : selected) std::cout << std::exchange(separator, ", ") << d.name();
    std::cout << "\n";
  };
  auto opencl = all.of(troupe::backend::opencl);
  auto cuda = all.of(troupe::backend::cuda);
  show("of(backend::opencl)", opencl);
  show("of(backend::cuda)", cuda);
  show("type(device_type::gpu)", all.type(troupe::device_type::gpu));
  show("type(device_type::cpu)", all.type(troupe::device_type::cpu));
  auto turing_or_newer = all.min_compute_capability({7, 5});  // CUDA devices only
  show("min_compute_capability({7, 5})", turing_or_newer);
  auto opencl_1_2 = all.min_opencl_version({1, 2});  // OpenCL devices only
  show("min_opencl_version({1, 2})", opencl_1_2);
  std::string word =
      all.empty() ? "GPU" : all[0].name().substr(0, all[0].name().find_first_of(" -"));
  auto named = all.name_contains(word);
  show("name_contains(\"" + word + "\")", named);
  show("of(backend::cuda).type(device_type::gpu)", cuda.type(troupe::device_type::gpu));

  bool explained = false;
  try {
    all.of(troupe::backend::cuda).min_compute_capability({99, 0}).front();
  } catch (const troupe::error& e) {
    explained = e.code() == troupe::errc::invalid_argument;
    std::cout << "front() of an empty selection: " << e.what() << "\n";
  }

  // Every device is of one backend; a backend without devices says why; filters keep only
  // devices that pass them.
  bool ok =
      explained && opencl.size() + cuda.size() == all.size() && (all.empty() || !named.empty());
  for (auto b : {troupe::backend::opencl, troupe::backend::cuda}) {
    bool why = false;
    for (const auto& u : all.unavailable()) why = why || (u.backend == b && !u.reason.empty());
    ok = ok && (!all.of(b).empty() || why);
  }
  for (const auto& d : turing_or_newer)
    ok = ok && d.backend() == troupe::backend::cuda &&
         d.info().compute_capability >= (troupe::version{7, 5});
  for (const auto& d : opencl_1_2)
    ok = ok && d.backend() == troupe::backend::opencl &&
         d.info().opencl_version >= (troupe::version{1, 2});
  std::cout << "the filters kept what they should: " << (ok ? "yes" : "no") << "\n";
  return ok ? 0 : 1;
}
