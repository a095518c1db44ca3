// OptimizerRules: the element-wise update rules of layers/Optimizer.hpp, one definition for every
// backend (host and device code; no CUDA header needed), in the element type T of the parameters.
#pragma once

#include <math.h>

#include <cmath>
#include <cstdint>

#include "layers/Optimizer.hpp"

#ifdef __CUDACC__
#define VDNN_OPTIMIZER_HOST_DEVICE __host__ __device__
#else
#define VDNN_OPTIMIZER_HOST_DEVICE
#endif

namespace vdnn::layers::optim {

/// The scalars of one parameter's update in one step, in T (computed in double on the host).
template <typename T>
struct UpdateRule {
  T lr = 0;
  T momentum = 0;
  T dampening = 0;
  T weight_decay = 0;  // 0 for an excluded parameter
  T trust_eta = 0;     // LARS, not excluded: eta; else 0 (no trust scaling)
  bool nesterov = false;
  bool first = false;  // no state yet: it starts from this step's gradient
  // AdamW
  T beta1 = 0;
  T beta2 = 0;
  T eps = 0;
  T decay_factor = 1;  // 1 - lr * weight_decay
  T step_size = 0;     // lr / (1 - beta1^t)
  T bias2_sqrt = 1;    // sqrt(1 - beta2^t)
};

/// The rule of `config` for one parameter at rate `lr` after `steps_before` updates.
template <typename T>
UpdateRule<T> update_rule(const OptimizerConfig& c, double lr, std::int64_t steps_before,
                          bool excluded) {
  const double wd = excluded ? 0.0 : c.weight_decay;
  const double t = static_cast<double>(steps_before + 1);
  UpdateRule<T> r;
  r.lr = static_cast<T>(lr);
  r.momentum = static_cast<T>(c.momentum);
  r.dampening = static_cast<T>(c.dampening);
  r.weight_decay = static_cast<T>(wd);
  r.trust_eta = static_cast<T>(c.kind == OptimizerKind::Lars && !excluded ? c.lars_trust : 0.0);
  r.nesterov = c.nesterov;
  r.first = steps_before == 0;
  r.beta1 = static_cast<T>(c.adam_beta1);
  r.beta2 = static_cast<T>(c.adam_beta2);
  r.eps = static_cast<T>(c.adam_eps);
  r.decay_factor = static_cast<T>(1.0 - lr * wd);
  r.step_size = static_cast<T>(lr / (1.0 - std::pow(c.adam_beta1, t)));
  r.bias2_sqrt = static_cast<T>(std::sqrt(1.0 - std::pow(c.adam_beta2, t)));
  return r;
}

VDNN_OPTIMIZER_HOST_DEVICE inline float square_root(float x) { return sqrtf(x); }
VDNN_OPTIMIZER_HOST_DEVICE inline double square_root(double x) { return sqrt(x); }

/// torch.nn.utils.clip_grad_norm_'s factor: max_norm / (total_norm + 1e-6), at most 1.
template <typename T>
VDNN_OPTIMIZER_HOST_DEVICE T clip_coefficient(T max_norm, T total_norm) {
  const T c = max_norm / (total_norm + static_cast<T>(1e-6));
  return c < 1 ? c : static_cast<T>(1);
}

/// LARS's trust ratio eta * ||w|| / (||g|| + wd * ||w||) from the sums of squares of the weight
/// and of the unclipped gradient, whose norm `clip` scales; 1 when either norm is 0 or eta is 0
/// (SGD, an excluded parameter).
template <typename T>
VDNN_OPTIMIZER_HOST_DEVICE T trust_ratio(const UpdateRule<T>& r, T weight_squares, T grad_squares,
                                         T clip) {
  const T w = square_root(weight_squares);
  const T g = clip * square_root(grad_squares);
  if (r.trust_eta == 0 || !(w > 0) || !(g > 0)) return 1;
  return r.trust_eta * w / (g + r.weight_decay * w);
}

/// torch.optim.SGD on one element, on the gradient scaled by `clip` and, for LARS, by `trust`
/// (apex's LARC: the decayed gradient scaled, then SGD without decay): d = trust * (clip * g +
/// wd * p); buf = first ? d : momentum * buf + (1 - dampening) * d; d = nesterov ? d + momentum *
/// buf : buf; p -= lr * d. With momentum 0, buf = d (torch keeps no buffer; the update is the
/// same). A factor of 1 is not applied, so that plain SGD computes g + wd * p and momentum * buf
/// + d whatever a compiler contracts into FMAs (bitwise the update before clipping and LARS).
template <typename T>
VDNN_OPTIMIZER_HOST_DEVICE void momentum_element(const UpdateRule<T>& r, T trust, T clip, T& p, T g,
                                                 T& buf) {
  if (clip != 1) g *= clip;
  T d = g + r.weight_decay * p;
  if (trust != 1) d *= trust;
  const T fresh = r.dampening == 0 ? d : (1 - r.dampening) * d;
  buf = r.first || r.momentum == 0 ? d : r.momentum * buf + fresh;
  d = r.nesterov ? d + r.momentum * buf : buf;
  p -= r.lr * d;
}

/// torch.optim.AdamW (amsgrad off) on one element of the gradient scaled by `clip`: p *= 1 - lr *
/// wd; m = beta1 * m + (1 - beta1) * g; v = beta2 * v + (1 - beta2) * g^2 (both from 0 on the
/// first step); p -= step_size * m / (sqrt(v) / bias2_sqrt + eps).
template <typename T>
VDNN_OPTIMIZER_HOST_DEVICE void adamw_element(const UpdateRule<T>& r, T clip, T& p, T g, T& m,
                                              T& v) {
  g *= clip;
  p *= r.decay_factor;
  m = r.first ? (1 - r.beta1) * g : r.beta1 * m + (1 - r.beta1) * g;
  v = r.first ? (1 - r.beta2) * g * g : r.beta2 * v + (1 - r.beta2) * g * g;
  p -= r.step_size * m / (square_root(v) / r.bias2_sqrt + r.eps);
}

}  // namespace vdnn::layers::optim

#undef VDNN_OPTIMIZER_HOST_DEVICE
