#pragma once

// The device layer: one futurized API over OpenCL and CUDA devices. Link troupe::device.
#include "troupe/core/actor_system.hpp"
#include "troupe/device/buffer.hpp"
#include "troupe/device/dependencies.hpp"
#include "troupe/device/device.hpp"
#include "troupe/device/device_info.hpp"
#include "troupe/device/device_queue.hpp"
#include "troupe/device/device_selection.hpp"
#include "troupe/device/host_buffer.hpp"
#include "troupe/device/local_memory.hpp"
#include "troupe/device/nd_range.hpp"
#include "troupe/device/program.hpp"
