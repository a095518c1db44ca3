// Learning-rate schedules, as torch.optim.lr_scheduler.StepLR and CosineAnnealingLR define them,
// after LinearLR's warmup.
#include "graph/LrSchedule.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/Error.hpp"

namespace vdnn::graph {

LrPolicy parse_lr_policy(const std::string& name) {
  if (name == "constant") return LrPolicy::Constant;
  if (name == "step") return LrPolicy::Step;
  if (name == "cosine") return LrPolicy::Cosine;
  throw runtime::InvalidArgument("unknown learning-rate schedule '" + name +
                                 "'; expected constant, step or cosine");
}

const char* lr_policy_name(LrPolicy policy) noexcept {
  switch (policy) {
    case LrPolicy::Step:
      return "step";
    case LrPolicy::Cosine:
      return "cosine";
    case LrPolicy::Constant:
      break;
  }
  return "constant";
}

double LrSchedule::at(std::int64_t step) const {
  if (step < warmup_steps) {
    const double done = static_cast<double>(step) / static_cast<double>(warmup_steps);
    return base_lr * (warmup_start_factor + (1.0 - warmup_start_factor) * done);
  }
  step -= warmup_steps;
  const std::int64_t annealed = total_steps - warmup_steps;
  switch (policy) {
    case LrPolicy::Step:
      return base_lr *
             std::pow(gamma, static_cast<double>(step / std::max<std::int64_t>(1, step_size)));
    case LrPolicy::Cosine: {
      const double t = static_cast<double>(std::min(step, annealed)) /
                       static_cast<double>(std::max<std::int64_t>(1, annealed));
      return min_lr + 0.5 * (base_lr - min_lr) * (1.0 + std::cos(3.141592653589793 * t));
    }
    case LrPolicy::Constant:
      break;
  }
  return base_lr;
}

}  // namespace vdnn::graph
