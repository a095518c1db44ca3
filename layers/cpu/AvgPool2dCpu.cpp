// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/AvgPool2dCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

AvgPool2dCpu::AvgPool2dCpu(const AvgPool2dSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void AvgPool2dCpu::forward(const ForwardArgs&) { throw runtime::Error("AvgPool2dCpu: not implemented"); }
void AvgPool2dCpu::backward(const BackwardArgs&) { throw runtime::Error("AvgPool2dCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
