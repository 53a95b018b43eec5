#pragma once

// The kernel layer: OpenCL and CUDA kernels as actors, composed into pipelines on
// device-resident memory (`sys.spawn_kernel`, `mem_ref`), and
// building blocks made of them (spawn_scan, spawn_compaction,
// spawn_radix_sort). Link troupe::kernel.
#include "troupe/core.hpp"
#include "troupe/device.hpp"
#include "troupe/kernel/compaction.hpp"
#include "troupe/kernel/device_set.hpp"
#include "troupe/kernel/kernel_options.hpp"
#include "troupe/kernel/mem_ref.hpp"
#include "troupe/kernel/portable_source.hpp"
#include "troupe/kernel/radix_sort.hpp"
#include "troupe/kernel/request_shape.hpp"
#include "troupe/kernel/scan.hpp"
#include "troupe/kernel/signature.hpp"
#include "troupe/kernel/size_rule.hpp"
#include "troupe/kernel/source.hpp"
#include "troupe/kernel/spawn_kernel.hpp"
