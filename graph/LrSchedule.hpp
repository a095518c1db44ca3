// LrSchedule: the learning rate as a function of the step (constant, step decay or cosine), after
// an optional linear warmup.
#pragma once

#include <cstdint>
#include <string>

namespace vdnn::graph {

enum class LrPolicy : std::uint8_t { Constant, Step, Cosine };

/// Parses "constant", "step" or "cosine"; throws runtime::InvalidArgument naming the choices.
LrPolicy parse_lr_policy(const std::string& name);
const char* lr_policy_name(LrPolicy policy) noexcept;

struct LrSchedule {
  LrPolicy policy = LrPolicy::Constant;
  double base_lr = 0.1;
  std::int64_t step_size = 30;  // Step: multiply by gamma every step_size steps
  double gamma = 0.1;
  std::int64_t total_steps = 1;  // Cosine: anneal from base_lr to min_lr over total_steps
  double min_lr = 0.0;
  /// Linear warmup over the first warmup_steps steps, from warmup_start_factor x base_lr towards
  /// base_lr, then the policy from its own step 0 (Cosine over total_steps - warmup_steps):
  /// torch.optim.lr_scheduler's SequentialLR of LinearLR and the policy, as torchvision's recipes
  /// use it (start factor 0.01 there too).
  std::int64_t warmup_steps = 0;
  double warmup_start_factor = 0.01;

  /// Learning rate of zero-based step `step`.
  double at(std::int64_t step) const;
};

}  // namespace vdnn::graph
