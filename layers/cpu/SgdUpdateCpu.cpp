// The SGD update loop on the CPU, for F32 and F64 parameters.
#include "layers/cpu/SgdUpdateCpu.hpp"

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
namespace {

template <typename T>
void sgd(const TensorView& param, const TensorView& grad, const TensorView& velocity,
         const SgdHyper& h) {
  T* p = param.as<T>();
  const T* g = grad.as<T>();
  T* v = velocity.as<T>();
  const T lr = static_cast<T>(h.lr);
  const T mu = static_cast<T>(h.momentum);
  const T wd = static_cast<T>(h.weight_decay);
  const std::int64_t n = param.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    const T d = g[i] + wd * p[i];
    v[i] = h.first_step ? d : mu * v[i] + d;
    p[i] -= lr * v[i];
  }
}

}  // namespace

void SgdUpdateCpu::apply(const TensorView& param, const TensorView& grad,
                         const TensorView& velocity, const SgdHyper& hyper) {
  VDNN_EXPECTS(param.shape == grad.shape && param.shape == velocity.shape,
               "SGD: parameter, gradient and velocity shapes differ");
  if (param.dtype == runtime::DType::F64) {
    sgd<double>(param, grad, velocity, hyper);
  } else {
    sgd<float>(param, grad, velocity, hyper);
  }
}

}  // namespace vdnn::layers::cpu
