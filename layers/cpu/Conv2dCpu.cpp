// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/Conv2dCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

Conv2dCpu::Conv2dCpu(const Conv2dSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void Conv2dCpu::forward(const ForwardArgs&) { throw runtime::Error("Conv2dCpu: not implemented"); }
void Conv2dCpu::backward(const BackwardArgs&) { throw runtime::Error("Conv2dCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
