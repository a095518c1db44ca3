// Inverted dropout and drop path on the CPU backend. The keep mask is hashed from (seed, step,
// element or sample index) instead of stored, so backward needs no mask tensor and any backend can
// reproduce it exactly.
#include "layers/cpu/DropoutCpu.hpp"

#include <algorithm>
#include <utility>

#include "layers/DropoutMask.hpp"

namespace vdnn::layers::cpu {
namespace {

// Multiplier of element i (0 or 1 / (1 - p)) for one (seed, step): the contract in DropoutCpu.hpp.
template <typename T>
class Mask {
 public:
  Mask(double p, std::uint64_t seed, std::uint64_t step, std::int64_t draw_size)
      : p_(p),
        scale_(static_cast<T>(1.0 / (1.0 - p))),
        state_(dropout::state(seed, step)),
        draw_size_(draw_size) {}

  T operator()(std::int64_t i) const {
    return dropout::keep(state_, i / draw_size_, p_) ? scale_ : T(0);
  }

 private:
  double p_;
  T scale_;
  std::uint64_t state_;
  std::int64_t draw_size_;
};

template <typename T>
void dropout_forward(const Mask<T>& mask, const ForwardArgs& args) {
  const T* x = args.inputs[0].as<T>();
  T* y = args.output.as<T>();
  const std::int64_t n = args.output.numel();
  if (!args.training) {
    std::copy_n(x, n, y);
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] * mask(i);
}

template <typename T>
void dropout_backward(const Mask<T>& mask, const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  const T* dy = args.grad_output.as<T>();
  T* dx = target.tensor.as<T>();
  const std::int64_t n = args.grad_output.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    const T g = dy[i] * mask(i);
    dx[i] = target.accumulate ? dx[i] + g : g;
  }
}

}  // namespace

DropoutCpu::DropoutCpu(const DropoutSpec& spec, std::vector<Shape> input_shapes,
                       const LayerOptions& options)
    : DropoutCpu(spec, spec.p, /*per_sample=*/false, std::move(input_shapes), options) {}

DropoutCpu::DropoutCpu(const StochasticDepthSpec& spec, std::vector<Shape> input_shapes,
                       const LayerOptions& options)
    : DropoutCpu(spec, spec.p, /*per_sample=*/true, std::move(input_shapes), options) {}

DropoutCpu::DropoutCpu(const LayerSpec& spec, double p, bool per_sample,
                       std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      p_(p),
      seed_(options.seed),
      // this->: the moved-from parameter input_shapes hides the accessor here.
      draw_size_(per_sample ? this->input_shapes()[0].sample_numel() : 1) {}

void DropoutCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    dropout_forward(Mask<double>(p_, seed_, args.step, draw_size_), args);
  } else {
    dropout_forward(Mask<float>(p_, seed_, args.step, draw_size_), args);
  }
}

void DropoutCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    dropout_backward(Mask<double>(p_, seed_, args.step, draw_size_), args);
  } else {
    dropout_backward(Mask<float>(p_, seed_, args.step, draw_size_), args);
  }
}

}  // namespace vdnn::layers::cpu
