#pragma once

// Info queries (clGet*Info) whose failures fail the test.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "cl_checks.hpp"

namespace troupe::remote_test {

/// A fixed-size info value; a failed query fails the test and gives T{}.
// The object and parameter types come from the query function only: CL_* constants are ints.
template <class T, class Object, class Param>
T info(cl_int (*query)(Object, Param, size_t, void*, size_t*), std::type_identity_t<Object> object,
       std::type_identity_t<Param> param) {
  T value{};
  const cl_int status = query(object, param, sizeof value, &value, nullptr);
  EXPECT_EQ(status, CL_SUCCESS) << "info query " << param << " gave " << cl_error_name(status);
  return value;
}

/// A variable-size info value as bytes.
template <class Object, class Param>
std::vector<unsigned char> info_bytes(cl_int (*query)(Object, Param, size_t, void*, size_t*),
                                      std::type_identity_t<Object> object,
                                      std::type_identity_t<Param> param) {
  std::size_t size = 0;
  cl_int status = query(object, param, 0, nullptr, &size);
  EXPECT_EQ(status, CL_SUCCESS) << "info size query " << param << " gave " << cl_error_name(status);
  std::vector<unsigned char> value(size);
  if (size > 0) {
    status = query(object, param, size, value.data(), nullptr);
    EXPECT_EQ(status, CL_SUCCESS) << "info query " << param << " gave " << cl_error_name(status);
  }
  return value;
}

/// A string info value, without its terminating NUL.
template <class Object, class Param>
std::string info_string(cl_int (*query)(Object, Param, size_t, void*, size_t*),
                        std::type_identity_t<Object> object, std::type_identity_t<Param> param) {
  auto bytes = info_bytes(query, object, param);
  std::string text(bytes.begin(), bytes.end());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

}  // namespace troupe::remote_test
