// The checks every backend's weight copier makes of its copies.
#include "layers/WeightCopies.hpp"

#include <string>

#include "runtime/Error.hpp"

namespace vdnn::layers {

void check_weight_copies(const std::vector<WeightCopy>& copies) {
  for (std::size_t i = 0; i < copies.size(); ++i) {
    const WeightCopy& c = copies[i];
    VDNN_EXPECTS(c.master.dtype == DType::F32 && c.copy.dtype == DType::BF16 &&
                     c.master.shape == c.copy.shape && c.master.layout == c.copy.layout,
                 "weight copy " + std::to_string(i) +
                     ": expected an F32 master and a BF16 copy of one shape and layout");
  }
}

}  // namespace vdnn::layers
