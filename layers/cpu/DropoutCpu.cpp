// Inverted dropout on the CPU backend. The keep mask is hashed from (seed, step, element index)
// instead of stored, so backward needs no mask tensor and any backend can reproduce it exactly.
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
  Mask(double p, std::uint64_t seed, std::uint64_t step)
      : p_(p), scale_(static_cast<T>(1.0 / (1.0 - p))), state_(dropout::state(seed, step)) {}

  T operator()(std::int64_t i) const { return dropout::keep(state_, i, p_) ? scale_ : T(0); }

 private:
  double p_;
  T scale_;
  std::uint64_t state_;
};

template <typename T>
void dropout_forward(const DropoutSpec& spec, std::uint64_t seed, const ForwardArgs& args) {
  const T* x = args.inputs[0].as<T>();
  T* y = args.output.as<T>();
  const std::int64_t n = args.output.numel();
  if (!args.training) {
    std::copy_n(x, n, y);
    return;
  }
  const Mask<T> mask(spec.p, seed, args.step);
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] * mask(i);
}

template <typename T>
void dropout_backward(const DropoutSpec& spec, std::uint64_t seed, const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  const T* dy = args.grad_output.as<T>();
  T* dx = target.tensor.as<T>();
  const std::int64_t n = args.grad_output.numel();
  const Mask<T> mask(spec.p, seed, args.step);
  for (std::int64_t i = 0; i < n; ++i) {
    const T g = dy[i] * mask(i);
    dx[i] = target.accumulate ? dx[i] + g : g;
  }
}

}  // namespace

DropoutCpu::DropoutCpu(const DropoutSpec& spec, std::vector<Shape> input_shapes,
                       const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), spec_(spec), seed_(options.seed) {}

void DropoutCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    dropout_forward<double>(spec_, seed_, args);
  } else {
    dropout_forward<float>(spec_, seed_, args);
  }
}

void DropoutCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    dropout_backward<double>(spec_, seed_, args);
  } else {
    dropout_backward<float>(spec_, seed_, args);
  }
}

}  // namespace vdnn::layers::cpu
