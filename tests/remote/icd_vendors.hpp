#pragma once

// The ICD setup of a test: which .icd files the loader reads, and so which platforms it lists.
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace troupe::remote_test {

/// Fills `directory` with .icd files for OCL_ICD_VENDORS: troupe's (if `with_troupe`) and every
/// system one that is not troupe's, so that the local platforms stay visible too.
inline void make_vendors_directory(const std::filesystem::path& directory, bool with_troupe,
                                   bool with_system = true) {
  std::filesystem::create_directories(directory);
  if (with_troupe) {
    std::filesystem::copy_file(TROUPE_ICD_FILE, directory / "troupe.icd",
                               std::filesystem::copy_options::overwrite_existing);
  }
  if (!with_system) return;
  std::error_code missing;
  for (const auto& entry : std::filesystem::directory_iterator("/etc/OpenCL/vendors", missing)) {
    if (entry.path().extension() != ".icd") continue;
    std::ifstream file(entry.path());
    std::string library;
    std::getline(file, library);
    if (library.find("troupe") != std::string::npos) continue;
    std::filesystem::copy_file(entry.path(), directory / entry.path().filename(),
                               std::filesystem::copy_options::overwrite_existing);
  }
}

/// The libraries the .icd files of `vendors` name, troupe's first, joined by ':'. Debian's
/// loader (ocl-icd) reads the folder from OCL_ICD_VENDORS and ignores OCL_ICD_FILENAMES;
/// Khronos' loader (CUDA's libOpenCL) loads exactly OCL_ICD_FILENAMES when both are set. The
/// tests set both, so that either loader sees the same platforms.
inline std::string icd_filenames(const std::filesystem::path& vendors) {
  std::vector<std::string> libraries;
  for (const auto& entry : std::filesystem::directory_iterator(vendors)) {
    if (entry.path().extension() != ".icd") continue;
    std::string library;
    std::getline(std::ifstream(entry.path()), library);
    if (library.empty()) continue;
    if (entry.path().filename() == "troupe.icd") {
      libraries.insert(libraries.begin(), library);
    } else {
      libraries.push_back(library);
    }
  }
  std::string joined;
  for (const auto& library : libraries) joined += (joined.empty() ? "" : ":") + library;
  return joined;
}

}  // namespace troupe::remote_test
