// OptimizerCpu: SGD, AdamW and LARS with global-norm clipping on host memory (F32 or F64).
#pragma once

#include "layers/Optimizer.hpp"

namespace vdnn::layers::cpu {

/// See layers/Optimizer.hpp. Sums of squares (clipping, LARS) accumulate in double; the element
/// rules run in the parameters' type. Thread-compatible.
class OptimizerCpu final : public Optimizer {
 public:
  /// Throws runtime::InvalidArgument for an invalid config (validate).
  OptimizerCpu(const OptimizerConfig& config, std::size_t parameters);
  void step(const std::vector<OptimizerSlot>& slots, double lr, std::int64_t steps_before) override;

 private:
  OptimizerConfig config_;
  std::size_t parameters_;
};

}  // namespace vdnn::layers::cpu
