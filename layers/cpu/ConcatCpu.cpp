// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/ConcatCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

ConcatCpu::ConcatCpu(const ConcatSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void ConcatCpu::forward(const ForwardArgs&) { throw runtime::Error("ConcatCpu: not implemented"); }
void ConcatCpu::backward(const BackwardArgs&) { throw runtime::Error("ConcatCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
