// The OpenCL extensions the client driver advertises: those that work through it. A server's
// device may list more (cl_khr_command_buffer, cl_khr_spir, GL sharing...), whose entry points
// or semantics the driver does not forward; a program that believed them would fail later.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::remote::icd {

/// Extensions that work through the driver unchanged: kernel-language ones (programs are
/// compiled by the server's OpenCL), ones that only add info queries (forwarded as they are),
/// and cl_khr_icd, which the driver implements itself. Anything with entry points or
/// properties of its own is left out until the driver forwards it.
inline constexpr std::string_view forwarded_extensions[] = {
    "cl_khr_icd",
    "cl_khr_fp64",
    "cl_khr_fp16",
    "cl_khr_byte_addressable_store",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cles_khr_int64",
    "cl_khr_3d_image_writes",
    "cl_khr_depth_images",
    "cl_khr_srgb_image_writes",
    "cl_khr_select_fprounding_mode",
    "cl_khr_async_work_group_copy_fence",
    "cl_khr_extended_async_copies",
    "cl_khr_expect_assume",
    "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product",
    "cl_khr_device_uuid",
    "cl_khr_pci_bus_info",
    "cl_ext_float_atomics",
};

/// True when the driver forwards `name` (see forwarded_extensions).
bool is_forwarded_extension(std::string_view name);

/// A space-separated extension list (CL_*_EXTENSIONS) keeping only forwarded extensions, in
/// their order.
std::string keep_forwarded(std::string_view extensions);

/// A cl_name_version array (CL_*_EXTENSIONS_WITH_VERSION, as raw bytes) keeping only forwarded
/// extensions, in their order.
std::vector<std::byte> keep_forwarded_versions(std::span<const std::byte> named_versions);

}  // namespace troupe::remote::icd
