// Optimizer names, the checks of a configuration and the state each optimizer keeps.
#include "layers/Optimizer.hpp"

#include <cmath>
#include <iterator>
#include <string>

#include "runtime/Error.hpp"

namespace vdnn::layers {
namespace {

constexpr const char* kOptimizerNames[] = {"sgd", "adamw", "lars"};

// Throws InvalidArgument unless `value` is finite and within [low, high] (or [low, high) when
// `open_high`).
void check_range(const char* name, double value, double low, double high, bool open_high = false) {
  const bool inside =
      std::isfinite(value) && value >= low && (open_high ? value < high : value <= high);
  if (!inside) {
    throw runtime::InvalidArgument(std::string(name) + " must be in [" + std::to_string(low) +
                                   ", " + std::to_string(high) + (open_high ? ")" : "]") +
                                   ", got " + std::to_string(value));
  }
}

void check_positive(const char* name, double value) {
  if (!std::isfinite(value) || value <= 0.0) {
    throw runtime::InvalidArgument(std::string(name) + " must be positive and finite, got " +
                                   std::to_string(value));
  }
}

}  // namespace

const char* optimizer_name(OptimizerKind kind) noexcept {
  return kOptimizerNames[static_cast<int>(kind)];
}

std::vector<std::string> optimizer_names() {
  return {std::begin(kOptimizerNames), std::end(kOptimizerNames)};
}

OptimizerKind parse_optimizer(const std::string& name) {
  for (int i = 0; i < static_cast<int>(std::size(kOptimizerNames)); ++i) {
    if (name == kOptimizerNames[i]) return static_cast<OptimizerKind>(i);
  }
  throw runtime::InvalidArgument("optimizer must be \"sgd\", \"adamw\" or \"lars\", got \"" + name +
                                 "\"");
}

void validate(const OptimizerConfig& c) {
  check_range("momentum", c.momentum, 0.0, 1.0);
  check_range("dampening", c.dampening, 0.0, 1.0);
  if (c.nesterov && (c.momentum <= 0.0 || c.dampening != 0.0)) {
    throw runtime::InvalidArgument("Nesterov momentum requires a momentum and zero dampening");
  }
  if (!std::isfinite(c.weight_decay) || c.weight_decay < 0.0) {
    throw runtime::InvalidArgument("weight_decay must be finite and not negative, got " +
                                   std::to_string(c.weight_decay));
  }
  check_range("beta1", c.adam_beta1, 0.0, 1.0, /*open_high=*/true);
  check_range("beta2", c.adam_beta2, 0.0, 1.0, /*open_high=*/true);
  check_positive("adam_eps", c.adam_eps);
  check_positive("lars_trust", c.lars_trust);
  if (!std::isfinite(c.clip_grad_norm) || c.clip_grad_norm < 0.0) {
    throw runtime::InvalidArgument("clip_grad_norm must be finite and not negative (0: off), got " +
                                   std::to_string(c.clip_grad_norm));
  }
}

int state_buffers(OptimizerKind kind) noexcept { return kind == OptimizerKind::AdamW ? 2 : 1; }

void check_slots(const std::vector<OptimizerSlot>& slots, std::size_t parameters,
                 OptimizerKind kind) {
  VDNN_EXPECTS(slots.size() == parameters, "optimizer of " + std::to_string(parameters) +
                                               " parameters given " + std::to_string(slots.size()));
  for (const OptimizerSlot& s : slots) {
    for (int i = 0; i < state_buffers(kind); ++i) {
      VDNN_EXPECTS(s.param.shape == s.grad.shape && s.param.shape == s.state[i].shape,
                   "optimizer: parameter, gradient and state shapes differ");
    }
  }
}

}  // namespace vdnn::layers
