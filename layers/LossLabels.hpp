// LossLabels: validation of the class labels a loss layer reads, shared by every backend so that
// they reject the same labels with the same message.
#pragma once

#include <cstdint>

namespace vdnn::layers {

/// Checks `samples` host labels against [0, classes). Called before any work is enqueued or
/// written, so a bad label leaves outputs and gradients untouched. Throws runtime::InvalidArgument
/// when `labels` is null or a label is out of range, naming the sample.
void check_labels(const std::int32_t* labels, std::int64_t samples, std::int64_t classes);

}  // namespace vdnn::layers
