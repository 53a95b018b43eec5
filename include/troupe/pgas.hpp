#pragma once

/// troupe's PGAS layer: partitioned global mailboxes over MPI, with aggregation and termination
/// detection (the FABS model of HClib-Actor).
#include "troupe/pgas/lambda_actor.hpp"
#include "troupe/pgas/mailbox_graph.hpp"
#include "troupe/pgas/message.hpp"
#include "troupe/pgas/selector.hpp"
#include "troupe/pgas/symmetric_array.hpp"
#include "troupe/pgas/world.hpp"
