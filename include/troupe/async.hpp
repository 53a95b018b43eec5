#pragma once

/// The async layer: futures, promises, continuations and combinators.
#include "troupe/async/dataflow.hpp"
#include "troupe/async/error.hpp"
#include "troupe/async/executor.hpp"
#include "troupe/async/future.hpp"
#include "troupe/async/promise.hpp"
#include "troupe/async/shared_future.hpp"
#include "troupe/async/when_all.hpp"
#include "troupe/async/when_any.hpp"
#include "troupe/async/work_guard.hpp"
