#include "troupe/core/default_handler.hpp"

#include <cstdio>
#include <string>

#include "troupe/core/event_based_actor.hpp"

namespace troupe::default_handlers {

namespace {

std::string sender_of(event_based_actor* self) {
  const auto& sender = self->current_sender();
  return sender ? sender->description() : std::string{"no actor"};
}

}  // namespace

message drop(event_based_actor*, message&) {
  return {};
}

message print_and_drop(event_based_actor* self, message& content) {
  std::fprintf(stderr, "troupe: %s dropped a message of %s from %s: no handler matches it\n",
               self->description().c_str(), content.type_names().c_str(), sender_of(self).c_str());
  return {};
}

message reflect(event_based_actor*, message& content) {
  return content;
}

message reflect_and_quit(event_based_actor* self, message& content) {
  self->quit(error{errc::unexpected_message,
                   self->description() + " ended: no handler matches a message of " +
                       content.type_names() + " from " + sender_of(self)});
  return content;
}

}  // namespace troupe::default_handlers
