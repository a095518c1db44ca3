// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/ReluCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

ReluCpu::ReluCpu(const ReluSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void ReluCpu::forward(const ForwardArgs&) { throw runtime::Error("ReluCpu: not implemented"); }
void ReluCpu::backward(const BackwardArgs&) { throw runtime::Error("ReluCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
