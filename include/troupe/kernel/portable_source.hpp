#pragma once

#include <string>
#include <string_view>

#include "troupe/kernel/source.hpp"

namespace troupe::kernel {

/// A kernel::source from one text written in the small dialect both backends share, so a
/// kernel is written once for OpenCL and CUDA. The body uses:
/// - `KERNEL` before a kernel, `FN` before a helper function;
/// - `GLOBAL` for global-memory pointers, `SHARED` for work-group (block) arrays declared in a
///   kernel with a constant size, `SHARED_PTR` for pointers to them in helpers;
/// - `THREAD_ID`, `BLOCK_ID`, `BLOCK_DIM`, `GRID_DIM`, `GLOBAL_ID` (dimension 0),
///   `SYNC_THREADS()`, and `ATOMIC_ADD(pointer, value)` on 32-bit integers;
/// - the type `u32`;
/// - `FADD`, `FSUB`, `FMUL` for float arithmetic that is never fused into an FMA, so that a
///   kernel computes what the same operations compute on the host.
/// `options` go to both compilers (`-D NAME=value` works in both).
source portable_source(std::string_view body, std::string options = {});

}  // namespace troupe::kernel
