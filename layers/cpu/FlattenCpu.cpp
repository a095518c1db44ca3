// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/FlattenCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

FlattenCpu::FlattenCpu(const FlattenSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void FlattenCpu::forward(const ForwardArgs&) { throw runtime::Error("FlattenCpu: not implemented"); }
void FlattenCpu::backward(const BackwardArgs&) { throw runtime::Error("FlattenCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
