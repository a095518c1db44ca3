// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/LinearCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

LinearCpu::LinearCpu(const LinearSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void LinearCpu::forward(const ForwardArgs&) { throw runtime::Error("LinearCpu: not implemented"); }
void LinearCpu::backward(const BackwardArgs&) { throw runtime::Error("LinearCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
