// PLACEHOLDER: to be replaced by the real implementation.
#include "layers/cpu/GlobalAvgPoolCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

GlobalAvgPoolCpu::GlobalAvgPoolCpu(const GlobalAvgPoolSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec) {}
void GlobalAvgPoolCpu::forward(const ForwardArgs&) { throw runtime::Error("GlobalAvgPoolCpu: not implemented"); }
void GlobalAvgPoolCpu::backward(const BackwardArgs&) { throw runtime::Error("GlobalAvgPoolCpu: not implemented"); }

}  // namespace vdnn::layers::cpu
