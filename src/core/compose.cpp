#include "troupe/core/compose.hpp"

#include "troupe/core/actor_system.hpp"

namespace troupe {

namespace {

class composed_actor final : public abstract_actor {
 public:
  composed_actor(actor_system& system, actor f, actor g)
      : abstract_actor(system, "composition"), f_(std::move(f)), g_(std::move(g)) {}

  void watch_stages() {
    auto hook = [addr = actor_addr{this}](const error& reason) {
      if (auto self = addr.lock()) static_cast<composed_actor*>(self.get())->finish(reason);
    };
    f_token_ = f_->attach_hook(hook);
    g_token_ = g_->attach_hook(hook);
  }

  void enqueue(mailbox_element_ptr element) override {
    if (is_terminated()) {
      bounce(*element, exit_reason());
      return;
    }
    element->stages.push_back(f_);
    g_->enqueue(std::move(element));
  }

 protected:
  void on_unreachable() override {
    f_->detach_hook(f_token_);
    g_->detach_hook(g_token_);
    finish(error{errc::unreachable, description() + " ended: no handle refers to it any more"});
    f_ = g_ = actor{};
  }

 private:
  actor f_;
  actor g_;
  std::uint64_t f_token_ = 0;
  std::uint64_t g_token_ = 0;
};

}  // namespace

actor operator*(const actor& f, const actor& g) {
  if (!f || !g)
    throw error(errc::invalid_argument, "operator*: cannot compose an empty actor handle");
  auto* composed = new composed_actor(f->system(), f, g);
  auto handle = actor::adopt(composed);
  composed->watch_stages();
  return handle;
}

}  // namespace troupe
