// Drop path on the CPU backend: one keep/drop draw per sample, dropout's hash of (seed, step,
// sample index), so the mask needs no storage and every backend reproduces it.
#include "layers/cpu/StochasticDepthCpu.hpp"

#include <utility>

#include "layers/DropoutMask.hpp"

namespace vdnn::layers::cpu {

StochasticDepthCpu::StochasticDepthCpu(const StochasticDepthSpec& spec,
                                       std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), p_(spec.p), seed_(options.seed) {}

template <typename T>
void StochasticDepthCpu::apply(bool training, std::uint64_t step, const T* in, T* out,
                               bool accumulate) const {
  const Shape& shape = input_shapes()[0];
  const std::uint64_t state = dropout::state(seed_, step);
  const auto kept = static_cast<T>(1.0 / (1.0 - p_));
  const std::int64_t sample = shape.sample_numel();
  for (std::int64_t n = 0; n < shape.n(); ++n) {
    const T scale = !training ? T(1) : dropout::keep(state, n, p_) ? kept : T(0);
    for (std::int64_t i = n * sample; i < (n + 1) * sample; ++i) {
      const T v = in[i] * scale;
      out[i] = accumulate ? out[i] + v : v;
    }
  }
}

void StochasticDepthCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    apply(args.training, args.step, args.inputs[0].as<double>(), args.output.as<double>(), false);
  } else {
    apply(args.training, args.step, args.inputs[0].as<float>(), args.output.as<float>(), false);
  }
}

void StochasticDepthCpu::backward(const BackwardArgs& args) {
  const GradTarget& dx = args.grad_inputs[0];
  if (dx.tensor.empty()) return;
  if (dtype() == DType::F64) {
    apply(true, args.step, args.grad_output.as<double>(), dx.tensor.as<double>(), dx.accumulate);
  } else {
    apply(true, args.step, args.grad_output.as<float>(), dx.tensor.as<float>(), dx.accumulate);
  }
}

}  // namespace vdnn::layers::cpu
