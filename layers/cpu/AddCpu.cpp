// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/AddCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

AddCpu::AddCpu(const AddSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void AddCpu::forward(const ForwardArgs&) { throw runtime::Error("AddCpu: not implemented"); }
void AddCpu::backward(const BackwardArgs&) { throw runtime::Error("AddCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
