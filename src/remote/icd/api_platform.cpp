// Discovery, platforms and devices.
#include <arpa/inet.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>

#include "remote/icd/api_support.hpp"
#include "remote/icd/forwarded_extensions.hpp"
#include "remote/protocol/serving_process.hpp"
#include "remote/protocol/tls_context.hpp"
#include "troupe/remote/cl_troupe_remote.h"
#include "troupe/remote/server_options.hpp"

using namespace troupe::remote;
using namespace troupe::remote::icd;

namespace {

std::vector<cl_platform_id>& found_platforms() {
  static auto* found = new std::vector<cl_platform_id>;
  return *found;
}

struct host_entry {
  std::string host;
  std::uint16_t port = default_port;
  std::string token;
  std::shared_ptr<const tls_context> tls;  // null: plain TCP
};

// Loopback by its name alone: nothing is resolved to decide it.
bool loopback_host(const std::string& host) {
  in_addr ipv4{};
  if (::inet_pton(AF_INET, host.c_str(), &ipv4) == 1) return (ntohl(ipv4.s_addr) >> 24) == 127;
  return host == "localhost" || host == "::1";
}

// The fields after the address: the token, if any, then options (tls-ca=FILE,
// tls-pin=sha256:HEX, insecure). Throws std::runtime_error saying which field is wrong.
void read_options(std::istringstream& fields, host_entry& entry) {
  std::string ca_file;
  std::optional<certificate_digest> pin;
  bool insecure = false;
  bool first = true;
  for (std::string field; fields >> field; first = false) {
    if (field.rfind("tls-ca=", 0) == 0) {
      ca_file = field.substr(7);
      if (ca_file.empty()) throw std::runtime_error("tls-ca= names no file");
    } else if (field.rfind("tls-pin=", 0) == 0) {
      try {
        pin = parse_certificate_pin(field.substr(8));
      } catch (const std::invalid_argument& wrong) {
        throw std::runtime_error(std::string("tls-pin: ") + wrong.what());
      }
    } else if (field == "insecure") {
      insecure = true;
    } else if (first) {
      entry.token = field;
    } else {
      throw std::runtime_error("'" + field +
                               "' is not an option (tls-ca=FILE, tls-pin=sha256:HEX, insecure); "
                               "the token, if any, comes right after the address");
    }
  }
  if (!ca_file.empty() || pin) {
    if (insecure) throw std::runtime_error("insecure was given with tls-ca or tls-pin");
    entry.tls = tls_context::client(ca_file, pin);
  } else if (!insecure && !loopback_host(entry.host)) {
    throw std::runtime_error(entry.host +
                             " is not a loopback address: give tls-ca=FILE or "
                             "tls-pin=sha256:HEX to reach it over TLS, or insecure to send its "
                             "token and data in clear text");
  }
}

// "host:port token options", "[v6]:port token options", or "host"; '#' starts a comment.
void read_hostfile(const std::string& path, std::vector<host_entry>& entries) {
  std::ifstream file(path);
  if (!file) return;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream fields(line);
    std::string address;
    host_entry entry;
    if (!(fields >> address)) continue;
    std::string port;
    if (address.front() == '[') {
      auto close = address.find(']');
      if (close == std::string::npos) {
        warn(path + ":" + std::to_string(number) + ": '" + address + "' has no closing ']'");
        continue;
      }
      entry.host = address.substr(1, close - 1);
      if (close + 1 < address.size() && address[close + 1] == ':') port = address.substr(close + 2);
    } else if (auto colon = address.rfind(':'); colon != std::string::npos) {
      entry.host = address.substr(0, colon);
      port = address.substr(colon + 1);
    } else {
      entry.host = address;
    }
    if (!port.empty()) {
      char* end = nullptr;
      long value = std::strtol(port.c_str(), &end, 10);
      if (*end != '\0' || value < 1 || value > 65535) {
        warn(path + ":" + std::to_string(number) + ": port '" + port + "' is not 1-65535");
        continue;
      }
      entry.port = static_cast<std::uint16_t>(value);
    }
    try {
      read_options(fields, entry);
    } catch (const std::exception& wrong) {
      warn(path + ":" + std::to_string(number) + ": " + wrong.what() + "; skipping the line");
      continue;
    }
    entries.push_back(entry);
  }
}

// TROUPE_ICD_HOSTS names the one file to read; otherwise the user's, then the system's.
std::vector<host_entry> configured_hosts() {
  std::vector<host_entry> entries;
  if (const char* only = std::getenv("TROUPE_ICD_HOSTS"); only != nullptr && *only != '\0') {
    if (!std::ifstream(only))
      warn(std::string("TROUPE_ICD_HOSTS names ") + only + ", which cannot be read");
    read_hostfile(only, entries);
    return entries;
  }
  if (const char* config = std::getenv("XDG_CONFIG_HOME"); config != nullptr && *config != '\0') {
    read_hostfile(std::string(config) + "/troupe/hosts", entries);
  } else if (const char* home = std::getenv("HOME"); home != nullptr) {
    read_hostfile(std::string(home) + "/.config/troupe/hosts", entries);
  }
  read_hostfile("/etc/troupe/hosts", entries);
  return entries;
}

std::string fetch_string(info_query query, const remote_object* subject, cl_uint param) {
  std::vector<std::byte> value;
  if (fetch_info(query, subject, param, 0, value) != CL_SUCCESS || value.empty()) return {};
  return std::string(reinterpret_cast<const char*>(value.data()), value.size() - 1);
}

// Every server named in the hostfiles, reached or not. Servers are never freed: their objects,
// and threads' connections to them, live as long as the program.
std::vector<server_connection*>& servers() {
  static auto* named = new std::vector<server_connection*>;
  return *named;
}

// Programs pick platforms by name, so a platform keeps the server's; where it lives is asked
// apart (CL_PLATFORM_REMOTE_ENDPOINT_TROUPE). TROUPE_ICD_PLATFORM_SUFFIX=1 adds it to the name.
bool platform_suffix_wanted() {
  const char* setting = std::getenv("TROUPE_ICD_PLATFORM_SUFFIX");
  if (setting == nullptr || *setting == '\0' || std::strcmp(setting, "0") == 0) return false;
  if (std::strcmp(setting, "1") == 0) return true;
  warn(std::string("TROUPE_ICD_PLATFORM_SUFFIX is '") + setting +
       "', expected 0 or 1; platform names stay the servers' own");
  return false;
}

bool contains_word(const std::string& list, const std::string& word) {
  std::istringstream words(list);
  for (std::string each; words >> each;) {
    if (each == word) return true;
  }
  return false;
}

// True when a cl_name_version array names `name`.
bool contains_version(const std::vector<std::byte>& named_versions, const char* name) {
  for (std::size_t at = 0; at + sizeof(cl_name_version) <= named_versions.size();
       at += sizeof(cl_name_version)) {
    cl_name_version entry;
    std::memcpy(&entry, named_versions.data() + at, sizeof entry);
    if (std::strncmp(entry.name, name, CL_NAME_VERSION_MAX_NAME_SIZE) == 0) return true;
  }
  return false;
}

void discover() {
  if (const char* server = std::getenv(serving_process_variable);
      server != nullptr && server == std::to_string(::getpid())) {
    debug("inside troupe-deviced: no remote platforms (a server never serves remote ones)");
    return;
  }
  const bool suffixed = platform_suffix_wanted();
  int timeout_ms = 2000;
  if (const char* setting = std::getenv("TROUPE_ICD_CONNECT_TIMEOUT_MS")) {
    timeout_ms = std::max(1, std::atoi(setting));
  }
  for (const auto& entry : configured_hosts()) {
    auto* server = new server_connection(entry.host, entry.port, entry.token, entry.tls);
    servers().push_back(server);
    try {
      server->open(timeout_ms);
      request listing(opcode::get_platforms);
      reply answer;
      if (listing.call(*server, answer) != CL_SUCCESS) {
        throw std::runtime_error("listing its platforms failed: " + answer.message);
      }
      for (auto id : answer.fields().get_array<std::uint64_t>()) {
        auto* platform =
            static_cast<_cl_platform_id*>(server->object_for(object_kind::platform, id));
        platform->name = fetch_string(info_query::platform, platform, CL_PLATFORM_NAME);
        if (suffixed) platform->name += " (troupe @ " + server->endpoint() + ")";
        platform->extensions =
            keep_forwarded(fetch_string(info_query::platform, platform, CL_PLATFORM_EXTENSIONS));
        if (!contains_word(platform->extensions, "cl_khr_icd")) {
          platform->extensions += platform->extensions.empty() ? "cl_khr_icd" : " cl_khr_icd";
        }
        platform->extensions += " cl_troupe_remote";
        found_platforms().push_back(platform);
      }
      debug("connected to " + server->endpoint());
    } catch (const std::exception& error) {
      warn("skipping the server " + server->endpoint() + ": " + error.what());
      server->mark_lost(error.what());
    }
  }
}

}  // namespace

const std::vector<cl_platform_id>& troupe::remote::icd::discovered_platforms() {
  return found_platforms();
}

extern "C" {

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id* platform_list, cl_uint* num_platforms) {
  static std::once_flag once;
  std::call_once(once, discover);
  if ((num_entries == 0) != (platform_list == nullptr) && platform_list != nullptr) {
    return CL_INVALID_VALUE;
  }
  if (num_entries == 0 && num_platforms == nullptr) return CL_INVALID_VALUE;
  auto& found = found_platforms();
  if (num_platforms != nullptr) *num_platforms = static_cast<cl_uint>(found.size());
  for (cl_uint i = 0; platform_list != nullptr && i < num_entries && i < found.size(); ++i) {
    platform_list[i] = found[i];
  }
  return found.empty() ? CL_PLATFORM_NOT_FOUND_KHR : CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformIDs(cl_uint num_entries, cl_platform_id* platform_list,
                                                 cl_uint* num_platforms) {
  return clIcdGetPlatformIDsKHR(num_entries, platform_list, num_platforms);
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform,
                                                  cl_platform_info param_name,
                                                  size_t param_value_size, void* param_value,
                                                  size_t* param_value_size_ret) {
  if (!valid(platform, object_kind::platform)) return CL_INVALID_PLATFORM;
  switch (param_name) {
    case CL_PLATFORM_NAME:
      return copy_string_info(platform->name, param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_EXTENSIONS:
      return copy_string_info(platform->extensions, param_value_size, param_value,
                              param_value_size_ret);
    case CL_PLATFORM_EXTENSIONS_WITH_VERSION: {
      std::vector<std::byte> value;
      if (cl_int status = fetch_info(info_query::platform, platform, param_name, 0, value);
          status != CL_SUCCESS) {
        return status;
      }
      // As CL_PLATFORM_EXTENSIONS: cl_khr_icd when the server lacked it, then troupe's own.
      auto kept = keep_forwarded_versions(value);
      for (const char* added : {"cl_khr_icd", "cl_troupe_remote"}) {
        if (contains_version(kept, added)) continue;
        cl_name_version entry{CL_MAKE_VERSION(1, 0, 0), {}};
        std::memcpy(entry.name, added, std::strlen(added));
        const auto* bytes = reinterpret_cast<const std::byte*>(&entry);
        kept.insert(kept.end(), bytes, bytes + sizeof entry);
      }
      return copy_info(kept.data(), kept.size(), param_value_size, param_value,
                       param_value_size_ret);
    }
    case CL_PLATFORM_ICD_SUFFIX_KHR:
      return copy_string_info("troupe", param_value_size, param_value, param_value_size_ret);
    case CL_PLATFORM_REMOTE_ENDPOINT_TROUPE:
      return copy_string_info(platform->server->endpoint(), param_value_size, param_value,
                              param_value_size_ret);
    case CL_PLATFORM_VERSION: {
      std::vector<std::byte> value;
      if (cl_int status = fetch_info(info_query::platform, platform, param_name, 0, value);
          status != CL_SUCCESS) {
        return status;
      }
      std::string version(reinterpret_cast<const char*>(value.data()),
                          value.empty() ? 0 : value.size() - 1);
      return copy_string_info(cap_version(version, "OpenCL "), param_value_size, param_value,
                              param_value_size_ret);
    }
    default:
      return forward_info(info_query::platform, platform, param_name, 0, param_value_size,
                          param_value, param_value_size_ret);
  }
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type,
                                               cl_uint num_entries, cl_device_id* devices,
                                               cl_uint* num_devices) {
  if (!valid(platform, object_kind::platform)) return CL_INVALID_PLATFORM;
  if ((num_entries == 0 && devices != nullptr) || (devices == nullptr && num_devices == nullptr)) {
    return CL_INVALID_VALUE;
  }
  request listing(opcode::get_device_ids);
  listing.object(platform);
  listing.fields.put<std::uint64_t>(device_type);
  reply answer;
  if (cl_int status = listing.call(*platform->server, answer); status != CL_SUCCESS) return status;
  auto ids = answer.fields().get_array<std::uint64_t>();
  if (num_devices != nullptr) *num_devices = static_cast<cl_uint>(ids.size());
  for (std::size_t i = 0; devices != nullptr && i < ids.size() && i < num_entries; ++i) {
    auto* device =
        static_cast<_cl_device_id*>(platform->server->object_for(object_kind::device, ids[i]));
    device->platform = platform;
    devices[i] = device;
  }
  return ids.empty() ? CL_DEVICE_NOT_FOUND : CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id device, cl_device_info param_name,
                                                size_t param_value_size, void* param_value,
                                                size_t* param_value_size_ret) {
  if (!valid(device, object_kind::device)) return CL_INVALID_DEVICE;
  auto as_string = [](const std::vector<std::byte>& value) {
    return std::string(reinterpret_cast<const char*>(value.data()),
                       value.empty() ? 0 : value.size() - 1);
  };
  switch (param_name) {
    case CL_DEVICE_PLATFORM:
      if (device->platform != nullptr) {
        return copy_value_info(device->platform, param_value_size, param_value,
                               param_value_size_ret);
      }
      break;
    case CL_DEVICE_REFERENCE_COUNT: {
      cl_uint count = device->root ? 1 : static_cast<cl_uint>(device->references.load());
      return copy_value_info(count, param_value_size, param_value, param_value_size_ret);
    }
    case CL_DEVICE_VERSION:
    case CL_DEVICE_OPENCL_C_VERSION: {
      std::vector<std::byte> value;
      if (cl_int status = fetch_info(info_query::device, device, param_name, 0, value);
          status != CL_SUCCESS) {
        return status;
      }
      const char* prefix = param_name == CL_DEVICE_VERSION ? "OpenCL " : "OpenCL C ";
      return copy_string_info(cap_version(as_string(value), prefix), param_value_size, param_value,
                              param_value_size_ret);
    }
    case CL_DEVICE_EXTENSIONS:
    case CL_DEVICE_EXTENSIONS_WITH_VERSION: {
      // Only what works through the driver (forwarded_extensions.hpp).
      std::vector<std::byte> value;
      if (cl_int status = fetch_info(info_query::device, device, param_name, 0, value);
          status != CL_SUCCESS) {
        return status;
      }
      if (param_name == CL_DEVICE_EXTENSIONS) {
        return copy_string_info(keep_forwarded(as_string(value)), param_value_size, param_value,
                                param_value_size_ret);
      }
      auto kept = keep_forwarded_versions(value);
      return copy_info(kept.data(), kept.size(), param_value_size, param_value,
                       param_value_size_ret);
    }
    case CL_DEVICE_SVM_CAPABILITIES: {
      // OpenCL 2.0's shared virtual memory has entry points the driver does not forward: none,
      // where the server's device answers the query at all.
      std::vector<std::byte> value;
      if (cl_int status = fetch_info(info_query::device, device, param_name, 0, value);
          status != CL_SUCCESS) {
        return status;
      }
      cl_device_svm_capabilities none = 0;
      return copy_value_info(none, param_value_size, param_value, param_value_size_ret);
    }
    case CL_DEVICE_EXECUTION_CAPABILITIES: {
      // Native kernels are host function pointers, which cannot run on another host.
      cl_device_exec_capabilities capabilities = 0;
      std::vector<std::byte> value;
      if (cl_int status = fetch_info(info_query::device, device, param_name, 0, value);
          status != CL_SUCCESS) {
        return status;
      }
      std::memcpy(&capabilities, value.data(), std::min(value.size(), sizeof capabilities));
      capabilities &= ~static_cast<cl_device_exec_capabilities>(CL_EXEC_NATIVE_KERNEL);
      return copy_value_info(capabilities, param_value_size, param_value, param_value_size_ret);
    }
    default:
      break;
  }
  return forward_info(info_query::device, device, param_name, 0, param_value_size, param_value,
                      param_value_size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clCreateSubDevices(cl_device_id in_device,
                                                   const cl_device_partition_property* properties,
                                                   cl_uint num_devices, cl_device_id* out_devices,
                                                   cl_uint* num_devices_ret) {
  if (!valid(in_device, object_kind::device)) return CL_INVALID_DEVICE;
  if (properties == nullptr) return CL_INVALID_VALUE;
  std::vector<std::int64_t> flat;
  for (const auto* p = properties; *p != 0 && flat.size() < 64; ++p) {
    flat.push_back(static_cast<std::int64_t>(*p));
  }
  request creating(opcode::create_sub_devices);
  creating.object(in_device);
  creating.fields.put_array<std::int64_t>(flat);
  reply answer;
  if (cl_int status = creating.call(*in_device->server, answer); status != CL_SUCCESS) {
    return status;
  }
  auto ids = answer.fields().get_array<std::uint64_t>();
  if (out_devices != nullptr && num_devices < ids.size()) {
    for (auto id : ids) {
      request dropped(opcode::release);
      dropped.fields.put<std::uint64_t>(id);
      dropped.send(*in_device->server);
    }
    return CL_INVALID_VALUE;
  }
  if (num_devices_ret != nullptr) *num_devices_ret = static_cast<cl_uint>(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto* sub =
        static_cast<_cl_device_id*>(in_device->server->object_for(object_kind::device, ids[i]));
    sub->platform = in_device->platform;
    sub->root = false;
    sub->references = 1;
    if (out_devices != nullptr) {
      out_devices[i] = sub;
    } else {
      release_object(sub);
    }
  }
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clRetainDevice(cl_device_id device) {
  if (!valid(device, object_kind::device)) return CL_INVALID_DEVICE;
  if (!device->root) ++device->references;
  return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseDevice(cl_device_id device) {
  if (!valid(device, object_kind::device)) return CL_INVALID_DEVICE;
  if (!device->root) release_object(device);
  return CL_SUCCESS;
}

}  // extern "C"
