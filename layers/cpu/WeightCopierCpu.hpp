// WeightCopierCpu: the bf16 weight copies on the CPU backend (layers/WeightCopies.hpp).
#pragma once

#include <vector>

#include "layers/WeightCopies.hpp"

namespace vdnn::layers::cpu {

/// See layers/WeightCopies.hpp: refresh() rounds element by element on the calling thread.
class WeightCopierCpu final : public WeightCopier {
 public:
  /// Throws runtime::InvalidArgument as check_weight_copies.
  explicit WeightCopierCpu(std::vector<WeightCopy> copies);
  void refresh() override;

 private:
  std::vector<WeightCopy> copies_;
};

}  // namespace vdnn::layers::cpu
