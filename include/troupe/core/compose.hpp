#pragma once

#include "troupe/core/actor.hpp"

namespace troupe {

/// Composition with CAF's semantics: `f * g` is an actor that gives its input to `g`, gives
/// g's result to `f`, and lets `f` answer the original requester. The result travels directly
/// from stage to stage (no intermediate actor runs), so pipelines cost one message per stage.
/// An error at any stage goes straight back to the requester. The composed actor ends when
/// either stage ends.
actor operator*(const actor& f, const actor& g);

}  // namespace troupe
