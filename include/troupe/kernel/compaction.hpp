#pragma once

#include <cstdint>
#include <vector>

#include "troupe/core/actor_system.hpp"
#include "troupe/kernel/device_set.hpp"
#include "troupe/kernel/mem_ref.hpp"

namespace troupe::kernel {

/// A stream compaction actor (Billeter, Olsson, Assarsson) on device memory. It receives
/// `(std::vector<mem_ref<std::uint32_t>> columns, mem_ref<std::uint32_t> keep)`, all of one
/// size and on one device, and answers with `std::vector<mem_ref<std::uint32_t>>`: per column,
/// its elements where `keep` is not 0, in their order. The columns share one scan of `keep`.
/// The result's size is known only on the device: the actor reads that one number back before
/// it allocates the results; everything else is enqueued without waiting. When nothing is kept
/// the answer holds empty mem_refs. `keep` needs read_write rights (the scan passes it on).
actor spawn_compaction(actor_system& system, device_set devices);

}  // namespace troupe::kernel
