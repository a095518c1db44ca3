// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/SoftmaxCrossEntropyCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

SoftmaxCrossEntropyCpu::SoftmaxCrossEntropyCpu(const SoftmaxCrossEntropySpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void SoftmaxCrossEntropyCpu::forward(const ForwardArgs&) { throw runtime::Error("SoftmaxCrossEntropyCpu: not implemented"); }
void SoftmaxCrossEntropyCpu::backward(const BackwardArgs&) { throw runtime::Error("SoftmaxCrossEntropyCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
