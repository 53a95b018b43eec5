#include "troupe/device/detail/typed_commands.hpp"

#include <exception>
#include <string>

#include "troupe/async/error.hpp"

namespace troupe::detail {

std::exception_ptr check_range(const char* caller, std::size_t offset, std::size_t count,
                               std::size_t size) {
  if (offset <= size && count <= size - offset) return nullptr;
  return std::make_exception_ptr(
      error(errc::out_of_range, std::string{caller} + ": elements [" + std::to_string(offset) +
                                    ", " + std::to_string(offset + count) + ") lie outside the " +
                                    std::to_string(size) + " elements there are"));
}

std::exception_ptr check_handles(const char* caller, const queue_state* queue,
                                 const intrusive_ptr<buffer_state>& buffer) {
  if (!buffer)
    return std::make_exception_ptr(
        error(errc::no_state, std::string{caller} + ": the buffer handle is empty"));
  if (queue == nullptr)
    return std::make_exception_ptr(
        error(errc::no_state, std::string{caller} + ": the queue handle is empty"));
  return nullptr;
}

}  // namespace troupe::detail
