#pragma once

// The kernel layer: OpenCL and CUDA kernels as actors, composed into pipelines on
// device-resident memory (`sys.spawn_kernel`, `mem_ref`). Link troupe::kernel.
#include "troupe/core.hpp"
#include "troupe/device.hpp"
#include "troupe/kernel/kernel_options.hpp"
#include "troupe/kernel/mem_ref.hpp"
#include "troupe/kernel/signature.hpp"
#include "troupe/kernel/spawn_kernel.hpp"
