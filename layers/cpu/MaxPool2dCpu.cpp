// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/MaxPool2dCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

MaxPool2dCpu::MaxPool2dCpu(const MaxPool2dSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void MaxPool2dCpu::forward(const ForwardArgs&) { throw runtime::Error("MaxPool2dCpu: not implemented"); }
void MaxPool2dCpu::backward(const BackwardArgs&) { throw runtime::Error("MaxPool2dCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
