#include "device/opencl/opencl_program_image.hpp"

#include <cstring>
#include <sstream>
#include <utility>

#include "troupe/async/error.hpp"

namespace troupe::detail {

std::vector<std::byte> opencl_program_image::serialize() const {
  std::ostringstream out;
  out << "troupe-opencl 1\n" << kernels.size() << '\n';
  for (auto& [name, params] : kernels) {
    out << name << ' ' << params.size() << '\n';
    for (auto& p : params)
      out << static_cast<int>(p.what) << ' ' << p.size << ' '
          << (p.type_name.empty() ? "-" : p.type_name) << '\n';
  }
  out << binary.size() << '\n';
  auto text = out.str();
  std::vector<std::byte> blob(text.size() + binary.size());
  std::memcpy(blob.data(), text.data(), text.size());
  std::memcpy(blob.data() + text.size(), binary.data(), binary.size());
  return blob;
}

opencl_program_image opencl_program_image::parse(std::span<const std::byte> blob,
                                                 const std::string& device) {
  auto corrupt = [&] {
    return error(errc::device_error,
                 "cached OpenCL program for device '" + device + "' is damaged");
  };
  std::string text(reinterpret_cast<const char*>(blob.data()), blob.size());
  std::istringstream in{text};
  std::string magic, magic_version;
  std::size_t count = 0;
  if (!(in >> magic >> magic_version >> count) || magic != "troupe-opencl" ||
      magic_version != "1" || count > 100000)
    throw corrupt();
  opencl_program_image image;
  for (std::size_t k = 0; k < count; ++k) {
    std::string name;
    std::size_t params = 0;
    if (!(in >> name >> params) || params > 1000) throw corrupt();
    auto& list = image.kernels[name];
    for (std::size_t i = 0; i < params; ++i) {
      int what = 0;
      kernel_param p;
      if (!(in >> what >> p.size >> p.type_name) || what < 0 || what > 4) throw corrupt();
      p.what = static_cast<kernel_param::kind>(what);
      p.type_name = p.type_name == "-" ? std::string{} : canonical_type(p.type_name);
      list.push_back(p);
    }
  }
  std::size_t size = 0;
  if (!(in >> size)) throw corrupt();
  in.get();  // the newline
  auto at = static_cast<std::size_t>(in.tellg());
  if (at + size != blob.size()) throw corrupt();
  image.binary.resize(size);
  std::memcpy(image.binary.data(), blob.data() + at, size);
  return image;
}

std::string canonical_type(std::string name) {
  while (!name.empty() && name.back() == ' ') name.pop_back();
  const std::pair<const char*, const char*> spellings[] = {
      {"unsigned char", "uchar"}, {"unsigned short", "ushort"}, {"unsigned int", "uint"},
      {"unsigned long", "ulong"}, {"unsigned", "uint"},         {"signed char", "char"}};
  for (auto [long_name, short_name] : spellings)
    if (name.rfind(long_name, 0) == 0)
      name = short_name + name.substr(std::string{long_name}.size());
  std::erase(name, ' ');
  return name;
}

}  // namespace troupe::detail
