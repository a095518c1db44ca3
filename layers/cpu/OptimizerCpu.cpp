// The optimizer loops on the CPU: the global norm for clipping, then each parameter's element rule
// (layers/OptimizerRules.hpp) in its own type.
#include "layers/cpu/OptimizerCpu.hpp"

#include <string>

#include "layers/OptimizerRules.hpp"
#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
namespace {

template <typename T>
double sum_of_squares(const TensorView& x) {
  const T* v = x.as<T>();
  double sum = 0.0;
  for (std::int64_t i = 0; i < x.numel(); ++i) sum += static_cast<double>(v[i]) * v[i];
  return sum;
}

double sum_of_squares(const TensorView& x) {
  return x.dtype == DType::F64 ? sum_of_squares<double>(x) : sum_of_squares<float>(x);
}

template <typename T>
void update(const OptimizerConfig& config, const OptimizerSlot& s, double lr,
            std::int64_t steps_before, double clip) {
  const optim::UpdateRule<T> rule = optim::update_rule<T>(config, lr, steps_before, s.excluded);
  T* p = s.param.as<T>();
  const T* g = s.grad.as<T>();
  T* first = s.state[0].as<T>();
  const std::int64_t n = s.param.numel();
  const auto c = static_cast<T>(clip);
  if (config.kind == OptimizerKind::AdamW) {
    T* second = s.state[1].as<T>();
    for (std::int64_t i = 0; i < n; ++i)
      optim::adamw_element(rule, c, p[i], g[i], first[i], second[i]);
    return;
  }
  T trust = 1;
  if (rule.trust_eta != 0) {
    trust = optim::trust_ratio(rule, static_cast<T>(sum_of_squares(s.param)),
                               static_cast<T>(sum_of_squares(s.grad)), c);
  }
  for (std::int64_t i = 0; i < n; ++i)
    optim::momentum_element(rule, trust, c, p[i], g[i], first[i]);
}

}  // namespace

OptimizerCpu::OptimizerCpu(const OptimizerConfig& config, std::size_t parameters)
    : config_(config), parameters_(parameters) {
  validate(config);
}

void OptimizerCpu::step(const std::vector<OptimizerSlot>& slots, double lr,
                        std::int64_t steps_before) {
  check_slots(slots, parameters_, config_.kind);
  double clip = 1.0;
  if (config_.clip_grad_norm > 0.0) {
    double total = 0.0;
    for (const OptimizerSlot& s : slots) total += sum_of_squares(s.grad);
    clip = optim::clip_coefficient(config_.clip_grad_norm, std::sqrt(total));
  }
  for (const OptimizerSlot& s : slots) {
    if (s.param.dtype == DType::F64) {
      update<double>(config_, s, lr, steps_before, clip);
    } else {
      update<float>(config_, s, lr, steps_before, clip);
    }
  }
}

}  // namespace vdnn::layers::cpu
