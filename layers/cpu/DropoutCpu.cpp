// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/DropoutCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

DropoutCpu::DropoutCpu(const DropoutSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void DropoutCpu::forward(const ForwardArgs&) { throw runtime::Error("DropoutCpu: not implemented"); }
void DropoutCpu::backward(const BackwardArgs&) { throw runtime::Error("DropoutCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
