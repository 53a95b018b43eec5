#pragma once

#include <vector>

#include "troupe/async/error.hpp"
#include "troupe/core/actor.hpp"
#include "troupe/core/mailbox_element.hpp"
#include "troupe/core/message.hpp"
#include "troupe/core/message_id.hpp"

namespace troupe::detail {

/// Sends an error response for the request in `element` (no-op for a non-request).
void respond_with_error(mailbox_element& element, const error& reason, abstract_actor* responder);

/// Routes a result: an error goes to the requester; otherwise to the next stage of a
/// composition if there is one, else back to the sender (as the response to a request, or as an
/// ordinary message if the result of an asynchronous message is not empty).
void route_result(actor& sender, message_id mid, std::vector<actor>& stages, message result,
                  abstract_actor* responder);

}  // namespace troupe::detail
