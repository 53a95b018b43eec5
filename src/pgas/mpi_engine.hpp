#pragma once

#include <mpi.h>

#include <exception>
#include <memory>
#include <vector>

#include "troupe/pgas/detail/engine.hpp"
#include "troupe/pgas/detail/mailbox_set.hpp"

namespace troupe::pgas::detail {

/// The engine over MPI: per destination an aggregation buffer, sent with MPI_Isend when full;
/// a ring of receives posted for any source; handlers run from progress().
class mpi_engine final : public engine {
 public:
  /// Initializes MPI through the process's one owner (support/mpi) unless it is running.
  mpi_engine(int* argc, char*** argv, std::size_t buffer_bytes);
  ~mpi_engine() override;

  void progress(bool flush_when_idle) override;
  void flush() override;
  void ship(int dest) override;
  int attach(mailbox_set& set) override;
  void detach(int id) noexcept override;
  void keep_unreported(std::exception_ptr failure) override;
  [[noreturn]] void abort_job(const std::string& message) const noexcept override;

  MPI_Comm comm() const noexcept { return comm_; }
  /// Runs progress until `request` completes.
  void wait_for(MPI_Request& request);
  /// Throws the first handler error that nothing has reported yet: of a selector destroyed
  /// before, or, with `of_selectors`, of one that has terminated. The others stay for the next
  /// call. Called by the world's collectives once they complete, so that every PE throws at the
  /// same one.
  void throw_unreported(bool of_selectors);
  /// The selectors attached now (null where one was detached).
  const std::vector<mailbox_set*>& selectors() const noexcept { return selectors_; }

 private:
  struct buffer {
    std::unique_ptr<std::byte[]> data;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::unique_ptr<std::byte[]> fresh_block();
  bool receive_some();
  void deliver(const std::byte* data, std::size_t bytes, int from);
  void complete_sends(bool block_until_below_limit);

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<buffer> receives_;  // posted in this order; matched in this order
  std::size_t next_receive_ = 0;
  std::vector<std::unique_ptr<std::byte[]>> current_;  // out_[d].data lives here
  std::vector<buffer> in_flight_;
  std::vector<std::unique_ptr<std::byte[]>> spare_;
  std::vector<mailbox_set*> selectors_;
  std::vector<std::exception_ptr> unreported_;  // oldest first
  bool progressing_ = false;
};

}  // namespace troupe::pgas::detail
