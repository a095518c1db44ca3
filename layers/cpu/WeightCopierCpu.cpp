// The CPU backend's bf16 weight copies: runtime::to_bfloat16 over each master.
#include "layers/cpu/WeightCopierCpu.hpp"

#include <utility>

#include "runtime/BFloat16.hpp"

namespace vdnn::layers::cpu {

WeightCopierCpu::WeightCopierCpu(std::vector<WeightCopy> copies) : copies_(std::move(copies)) {
  check_weight_copies(copies_);
}

void WeightCopierCpu::refresh() {
  for (const WeightCopy& c : copies_) {
    runtime::to_bfloat16(c.master.as<float>(), c.copy.as<runtime::BFloat16>(),
                         static_cast<std::size_t>(c.master.numel()));
  }
}

}  // namespace vdnn::layers::cpu
