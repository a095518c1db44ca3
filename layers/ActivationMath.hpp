// The smooth activations' formulas (PyTorch's definitions), shared by the CPU layers and the CUDA
// kernels so that both backends compute the same expressions.
#pragma once

#include <math.h>

#include <type_traits>
#include <utility>

#include "layers/LayerSpec.hpp"

#ifndef VDNN_HOST_DEVICE
#ifdef __CUDACC__
#define VDNN_HOST_DEVICE __host__ __device__
#else
#define VDNN_HOST_DEVICE
#endif
#endif

namespace vdnn::layers {

// The C math library by element type: callable in host and device code alike.
VDNN_HOST_DEVICE inline float exp_of(float x) { return expf(x); }
VDNN_HOST_DEVICE inline double exp_of(double x) { return exp(x); }
VDNN_HOST_DEVICE inline float erf_of(float x) { return erff(x); }
VDNN_HOST_DEVICE inline double erf_of(double x) { return erf(x); }

/// Whether activation A's backward reads its output (sigmoid, relu6) rather than its input (the
/// others): backward_needs says the same to the scheduler.
constexpr bool activation_grad_from_output(Activation a) {
  return a == Activation::Sigmoid || a == Activation::Relu6;
}

/// y = f(x) for activation A.
template <Activation A, typename T>
VDNN_HOST_DEVICE T activation_value(T x) {
  const T one(1);
  if constexpr (A == Activation::Silu) {
    return x / (one + exp_of(-x));
  } else if constexpr (A == Activation::Gelu) {
    return T(0.5) * x * (one + erf_of(x * T(0.70710678118654752440)));
  } else if constexpr (A == Activation::Sigmoid) {
    return one / (one + exp_of(-x));
  } else if constexpr (A == Activation::Relu6) {
    // PyTorch's hardtanh(x, 0, 6): NaN stays NaN.
    if (x <= T(0)) return T(0);
    if (x >= T(6)) return T(6);
    return x;
  } else if constexpr (A == Activation::Hardsigmoid) {
    // PyTorch's hardsigmoid: 0 up to -3, 1 from 3, (x + 3) / 6 between.
    if (x <= T(-3)) return T(0);
    if (x >= T(3)) return one;
    return (x + T(3)) / T(6);
  } else {
    // PyTorch's hardswish: 0 below -3, x above 3, x (x + 3) / 6 between.
    if (x <= T(-3)) return T(0);
    if (x >= T(3)) return x;
    return x * (x + T(3)) / T(6);
  }
}

/// dx = dy * f'(.) for activation A, from `saved`: the forward output for sigmoid and relu6, else
/// the input (activation_grad_from_output).
template <Activation A, typename T>
VDNN_HOST_DEVICE T activation_grad(T saved, T dy) {
  const T one(1);
  if constexpr (A == Activation::Silu) {
    const T s = one / (one + exp_of(-saved));
    return dy * s * (one + saved * (one - s));
  } else if constexpr (A == Activation::Gelu) {
    const T cdf = T(0.5) * (one + erf_of(saved * T(0.70710678118654752440)));
    const T pdf = T(0.39894228040143267794) * exp_of(T(-0.5) * saved * saved);
    return dy * (cdf + saved * pdf);
  } else if constexpr (A == Activation::Sigmoid) {
    return dy * saved * (one - saved);
  } else if constexpr (A == Activation::Relu6) {
    // PyTorch's hardtanh_backward: dy strictly inside (0, 6), where y == x; 0 at the clamps.
    return saved > T(0) && saved < T(6) ? dy : T(0);
  } else if constexpr (A == Activation::Hardsigmoid) {
    // PyTorch's hardsigmoid_backward: dy / 6 strictly inside (-3, 3), else 0.
    return saved > T(-3) && saved < T(3) ? dy / T(6) : T(0);
  } else {
    // PyTorch's hardswish_backward: 0 below -3, x / 3 + 1/2 up to 3 inclusive, 1 above.
    if (saved < T(-3)) return T(0);
    if (saved <= T(3)) return dy * (saved / T(3) + T(0.5));
    return dy;
  }
}

/// Calls f(std::integral_constant<Activation, a>{}): activation `a`, known at run time, as the
/// compile-time argument of the formulas above. Host code only; returns what f returns.
template <typename F>
decltype(auto) with_activation(Activation a, F&& f) {
  switch (a) {
    case Activation::Silu:
      return std::forward<F>(f)(std::integral_constant<Activation, Activation::Silu>{});
    case Activation::Gelu:
      return std::forward<F>(f)(std::integral_constant<Activation, Activation::Gelu>{});
    case Activation::Sigmoid:
      return std::forward<F>(f)(std::integral_constant<Activation, Activation::Sigmoid>{});
    case Activation::Hardswish:
      return std::forward<F>(f)(std::integral_constant<Activation, Activation::Hardswish>{});
    case Activation::Relu6:
      return std::forward<F>(f)(std::integral_constant<Activation, Activation::Relu6>{});
    case Activation::Hardsigmoid:
      break;
  }
  return std::forward<F>(f)(std::integral_constant<Activation, Activation::Hardsigmoid>{});
}

}  // namespace vdnn::layers
