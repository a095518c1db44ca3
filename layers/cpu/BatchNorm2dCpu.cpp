// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/BatchNorm2dCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

BatchNorm2dCpu::BatchNorm2dCpu(const BatchNorm2dSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void BatchNorm2dCpu::forward(const ForwardArgs&) { throw runtime::Error("BatchNorm2dCpu: not implemented"); }
void BatchNorm2dCpu::backward(const BackwardArgs&) { throw runtime::Error("BatchNorm2dCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
