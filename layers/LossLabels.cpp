// Label validation of the loss layers, backend-neutral.
#include "layers/LossLabels.hpp"

#include <string>

#include "runtime/Error.hpp"

namespace vdnn::layers {

void check_labels(const std::int32_t* labels, std::int64_t samples, std::int64_t classes) {
  VDNN_EXPECTS(labels != nullptr, "softmax_cross_entropy needs labels");
  for (std::int64_t n = 0; n < samples; ++n) {
    if (labels[n] < 0 || labels[n] >= classes) {
      throw runtime::InvalidArgument("softmax_cross_entropy: label " + std::to_string(labels[n]) +
                                     " of sample " + std::to_string(n) + " is outside [0, " +
                                     std::to_string(classes) + ")");
    }
  }
}

}  // namespace vdnn::layers
