// Optimizer: the per-backend parameter update of a training step, torch.optim's SGD (momentum,
// dampening, Nesterov), AdamW and LARS, after an optional clip of the gradients' global norm
// (torch.nn.utils.clip_grad_norm_). The element rules are layers/OptimizerRules.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers {

enum class OptimizerKind : std::uint8_t { Sgd, AdamW, Lars };

/// "sgd", "adamw", "lars".
const char* optimizer_name(OptimizerKind kind) noexcept;
/// The names optimizer_name gives, in enum order.
std::vector<std::string> optimizer_names();
/// The kind named `name`. Throws runtime::InvalidArgument naming the alternatives for another name.
OptimizerKind parse_optimizer(const std::string& name);

/// Everything an optimizer is configured by; every default lives here (PyTorch's, except the
/// momentum and weight decay of `vdnn train`).
struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::Sgd;
  double momentum = 0.9;       // SGD and LARS
  double dampening = 0.0;      // SGD and LARS: applies from the second step on
  bool nesterov = false;       // SGD and LARS: needs momentum > 0 and dampening 0
  double weight_decay = 5e-4;  // SGD, LARS: L2 added to the gradient; AdamW: decoupled
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_eps = 1e-8;
  double lars_trust = 0.001;    // LARS: eta of the trust ratio
  double clip_grad_norm = 0.0;  // > 0: clip the global L2 norm of the gradients to this
};

/// Throws runtime::InvalidArgument naming the first value out of range: momentum or dampening
/// outside [0, 1], nesterov without momentum > 0 and dampening 0 (as torch.optim.SGD), a negative
/// or non-finite weight decay, a beta outside [0, 1), eps <= 0, lars_trust <= 0, a negative
/// clip_grad_norm.
void validate(const OptimizerConfig& config);

/// F32 state buffers per trainable parameter: SGD and LARS 1 (momentum_buffer), AdamW 2
/// (exp_avg, exp_avg_sq).
int state_buffers(OptimizerKind kind) noexcept;
inline constexpr int kMaxStateBuffers = 2;

struct OptimizerSlot;

/// Throws runtime::InvalidArgument unless `slots` are `parameters` slots whose parameter,
/// gradient and state_buffers(kind) state views have one shape.
void check_slots(const std::vector<OptimizerSlot>& slots, std::size_t parameters,
                 OptimizerKind kind);

/// One trainable parameter as an optimizer sees it: views of its value, its gradient and its
/// state_buffers() state tensors (same shape; the rest empty), all owned by the caller.
struct OptimizerSlot {
  TensorView param;
  TensorView grad;
  std::array<TensorView, kMaxStateBuffers> state;
  /// No weight decay and no LARS trust scaling (biases and batch norm's weight and bias under
  /// --no-decay-bn-bias).
  bool excluded = false;
};

/// The update of one configuration over a fixed list of parameters. Not thread-safe.
class Optimizer {
 public:
  Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  Optimizer(Optimizer&&) = delete;
  Optimizer& operator=(Optimizer&&) = delete;
  virtual ~Optimizer() = default;
  /// One update of every slot at learning rate `lr`; `steps_before` updates ran before it (0: the
  /// state starts from this step's gradients, as torch.optim's does on its first step; AdamW's
  /// bias corrections use steps_before + 1). With config.clip_grad_norm > 0 the gradients are
  /// scaled first, in place, as clip_grad_norm_ does. `slots` must be the same list (count,
  /// shapes) every call. Throws runtime::InvalidArgument for a slot count other than the
  /// constructor's or views that disagree in shape; the CUDA backend runtime::CudaError.
  virtual void step(const std::vector<OptimizerSlot>& slots, double lr,
                    std::int64_t steps_before) = 0;
};

/// The implementation for `backend` over `parameters` slots (CUDA: on options.cuda's compute
/// stream, F32, enqueued without waiting and without a host synchronization). Throws
/// runtime::InvalidArgument for an invalid config (validate) or a backend this build lacks.
std::unique_ptr<Optimizer> make_optimizer(Backend backend, const LayerOptions& options,
                                          const OptimizerConfig& config, std::size_t parameters);

}  // namespace vdnn::layers
