#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "troupe/async/future.hpp"
#include "troupe/device/buffer.hpp"
#include "troupe/device/device.hpp"

namespace troupe::kernel {

/// What a holder of a mem_ref may do with the memory.
enum class access { read_only, write_only, read_write };

std::string_view to_string(access rights) noexcept;

/// Device-resident data passed between kernel actors: `size()` elements of T on one device,
/// with the event of the command that produces them. A kernel actor that receives one enqueues
/// at once, after that event, on the device: nothing waits on the host. The bytes come to the
/// host only at the end of a pipeline, or by `read()`. Another device takes it only by an
/// explicit `copy_to`; a kernel actor on another device refuses it with an error that says so.
template <class T>
class mem_ref {
 public:
  // -- constructors ---------------------------------------------------------

  mem_ref() = default;

  /// The first `count` elements of `memory`, ready once `ready` is.
  mem_ref(buffer<T> memory, std::size_t count, shared_future<void> ready,
          access rights = access::read_write)
      : memory_(std::move(memory)), count_(count), ready_(std::move(ready)), rights_(rights) {}

  // -- properties -----------------------------------------------------------

  bool valid() const noexcept { return memory_.valid(); }
  std::size_t size() const noexcept { return count_; }
  troupe::device device() const { return memory_.device(); }
  access rights() const noexcept { return rights_; }
  const buffer<T>& memory() const noexcept { return memory_; }
  /// Ready when the command that produces the data has finished; failed if it failed.
  const shared_future<void>& ready() const noexcept { return ready_; }

  /// The same memory, with rights narrowed to `rights` (never widened: a read-only mem_ref
  /// stays read-only).
  mem_ref restricted(access rights) const {
    mem_ref narrowed = *this;
    if (rights_ != access::read_write && rights != rights_) rights = rights_;
    narrowed.rights_ = rights;
    return narrowed;
  }

  // -- operations -----------------------------------------------------------

  /// The data, on the host, once it is ready. Fails with errc::invalid_argument for a
  /// write-only or empty mem_ref, and with the producing command's error if that failed.
  future<std::vector<T>> read() const {
    if (!valid()) {
      return make_exceptional_future<std::vector<T>>(
          error{errc::invalid_argument, "mem_ref::read: the mem_ref is empty"});
    }
    if (rights_ == access::write_only) {
      return make_exceptional_future<std::vector<T>>(
          error{errc::invalid_argument, "mem_ref::read: the mem_ref is write-only (" +
                                            std::to_string(count_) + " elements on " +
                                            device().name() + ")"});
    }
    return memory_.read(0, count_, after(ready_));
  }

  /// A copy on `target` (a peer copy, or staged through the host), ready when copied; the
  /// explicit way to move device-resident data to another device.
  mem_ref copy_to(const troupe::device& target) const {
    auto copy = target.allocate<T>(count_);
    auto copied = memory_.copy_to(0, copy, 0, count_, after(ready_));
    return mem_ref{std::move(copy), count_, std::move(copied).share(), access::read_write};
  }

 private:
  buffer<T> memory_;
  std::size_t count_ = 0;
  shared_future<void> ready_;
  access rights_ = access::read_write;
};

}  // namespace troupe::kernel
