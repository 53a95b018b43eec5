#pragma once

#include "troupe/core/actor_system.hpp"
#include "troupe/kernel/device_set.hpp"

namespace troupe::kernel {

/// A radix sort actor on device memory: it receives `(mem_ref<std::uint32_t> keys,
/// mem_ref<std::uint32_t> values)` of one size on one device and answers with new mem_refs of
/// both, ordered by key; equal keys keep their order (stable). It sorts 4 bits a pass, as many
/// passes as the largest key needs: it reads that one number back first (the result of a
/// max-scan actor); the passes (digit counts per tile, their scan, a stable scatter) are then
/// enqueued without waiting. The mem_refs it receives need read_write rights.
actor spawn_radix_sort(actor_system& system, device_set devices);

}  // namespace troupe::kernel
