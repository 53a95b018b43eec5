#pragma once

#include <cstddef>
#include <memory>

#include "troupe/support/intrusive_ptr.hpp"

namespace troupe::detail {

class host_copier;

/// The threads that ready fresh host memory for the reads of one actor system. Owned by its
/// device manager, which closes it when the system goes; its devices hold it, so that a read
/// submitted after that still works, on its calling thread alone.
class fresh_memory final : public ref_counted {
 public:
  // -- constructors --------------------------------------------------------

  /// Starts no thread yet: the first large prepare() does.
  fresh_memory();
  ~fresh_memory() override;

  // -- operations ----------------------------------------------------------

  /// Gives [data, data + bytes) huge pages where the kernel allows, and zeroes it with several
  /// threads. Fresh memory is faulted in page by page as it is first written; on one thread that
  /// costs three times the read from the device (an H200's 160 MB read: 33-44 ms fresh, 7-9 ms
  /// into memory written before).
  void prepare(void* data, std::size_t bytes);

  /// Ends the threads; prepare() then zeroes on its calling thread alone.
  void close() noexcept;

 private:
  std::unique_ptr<host_copier> faulting_;
};

}  // namespace troupe::detail
