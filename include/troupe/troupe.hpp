#pragma once

/// Everything troupe offers in this build.
#include "troupe/async.hpp"
#include "troupe/core.hpp"
#include "troupe/device.hpp"
#include "troupe/kernel.hpp"
#include "troupe/net.hpp"
