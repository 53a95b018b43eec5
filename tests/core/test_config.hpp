#pragma once

#include "troupe/core/config.hpp"

namespace troupe::test {

/// Two workers: enough for real concurrency on any machine, the same on every machine.
inline config two_threads() {
  config cfg;
  cfg.threads = 2;
  return cfg;
}

}  // namespace troupe::test
