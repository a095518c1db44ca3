// LossLabels: validation of the class labels a loss layer reads, and the rank rule its accuracies
// count, shared by every backend so that they reject the same labels with the same message and
// count the same hits.
#pragma once

#include <cstdint>

namespace vdnn::layers {

/// Checks `samples` host labels against [0, classes). Called before any work is enqueued or
/// written, so a bad label leaves outputs and gradients untouched. Throws runtime::InvalidArgument
/// when `labels` is null or a label is out of range, naming the sample.
void check_labels(const std::int32_t* labels, std::int64_t samples, std::int64_t classes);

/// The k of LossStats::top5.
inline constexpr std::int64_t kTopK = 5;

/// Whether the logit of class `index` ranks above the label's (`label_logit`, of class `label`):
/// it is larger, or equal with a lower index (of tied logits the lowest class ranks first, so
/// top-1 is the first maximum), and a NaN ranks above every number (torch.topk orders NaN
/// largest); a class never ranks above itself. A label is among the top k when fewer than k logits
/// rank above it, so with fewer than k classes every label is. constexpr, so the CUDA kernels call
/// it too (--expt-relaxed-constexpr).
template <typename T>
constexpr bool ranks_above(T logit, std::int64_t index, T label_logit, std::int64_t label) {
  if (index == label) return false;
  return index < label ? !(logit < label_logit) : !(logit <= label_logit);
}

}  // namespace vdnn::layers
