#pragma once

/// The core layer: actor system, scheduler, actors, messages, requests, composition.
#include "troupe/core/actor.hpp"
#include "troupe/core/actor_registry.hpp"
#include "troupe/core/actor_system.hpp"
#include "troupe/core/behavior.hpp"
#include "troupe/core/compose.hpp"
#include "troupe/core/config.hpp"
#include "troupe/core/event_based_actor.hpp"
#include "troupe/core/message.hpp"
#include "troupe/core/request.hpp"
#include "troupe/core/response_promise.hpp"
#include "troupe/core/scoped_actor.hpp"
