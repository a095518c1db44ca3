// The CUDA SGD update against SgdUpdateCpu over a table of sizes and hyper-parameters, for several
// consecutive steps. Within 1e-6 relative to 1 + |value|: either compiler may fuse the update into
// FMAs, which changes the last bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "layers/cpu/SgdUpdateCpu.hpp"
#include "layers/cuda/SgdUpdateCuda.hpp"
#include "runtime/Error.hpp"
#include "tests/layers/cuda/LayerRun.hpp"

namespace vdnn::test {
namespace {

class SgdCuda : public CudaTest {};

constexpr double kSgdTolerance = 1e-6;
constexpr int kSteps = 4;

TEST_F(SgdCuda, MatchesCpuOverSeveralSteps) {
  const std::vector<Shape> shapes = {Shape{1}, Shape{10}, Shape{64, 3, 3, 3}, Shape{1000, 513},
                                     Shape{256, 256, 3, 3}};
  struct Hyper {
    double lr, momentum, weight_decay;
  };
  const std::vector<Hyper> hypers = {{0.1, 0.0, 0.0}, {0.1, 0.9, 5e-4}, {0.01, 0.5, 1e-2}};
  layers::cpu::SgdUpdateCpu cpu;
  layers::cuda::SgdUpdateCuda cuda(cuda_options());
  for (const Shape& shape : shapes) {
    for (const Hyper& h : hypers) {
      SCOPED_TRACE(shape.to_string() + " lr=" + std::to_string(h.lr) + " momentum=" +
                   std::to_string(h.momentum) + " weight_decay=" + std::to_string(h.weight_decay));
      std::vector<float> param = uniform(shape.numel(), 300);
      // NaN: the first step must overwrite the velocity, not read it.
      std::vector<float> velocity(param.size(), kNan);
      const DeviceTensor device_param(stream(), param, shape);
      const DeviceTensor device_velocity(stream(), velocity, shape);
      for (int step = 0; step < kSteps; ++step) {
        std::vector<float> grad = uniform(shape.numel(), 310 + static_cast<std::uint64_t>(step));
        const DeviceTensor device_grad(stream(), grad, shape);
        const layers::SgdHyper hyper{h.lr, h.momentum, h.weight_decay, step == 0};
        cuda.apply(device_param.view(), device_grad.view(), device_velocity.view(), hyper);
        cpu.apply({param.data(), shape}, {grad.data(), shape}, {velocity.data(), shape}, hyper);
        // Waits for the update before device_grad goes.
        EXPECT_TRUE(all_near(device_param.download_now(stream()), param, kSgdTolerance))
            << "param after step " << step;
        EXPECT_TRUE(all_near(device_velocity.download_now(stream()), velocity, kSgdTolerance))
            << "velocity after step " << step;
      }
    }
  }
}

TEST_F(SgdCuda, RejectsMismatchedShapesAndDtypes) {
  layers::cuda::SgdUpdateCuda cuda(cuda_options());
  const DeviceTensor a(stream(), std::vector<float>(6, 1.0f), Shape{2, 3});
  const DeviceTensor b(stream(), std::vector<float>(6, 1.0f), Shape{3, 2});
  const layers::SgdHyper hyper{0.1, 0.9, 0.0, true};
  EXPECT_THROW(cuda.apply(a.view(), b.view(), a.view(), hyper), runtime::InvalidArgument);
  TensorView f64 = a.view();
  f64.dtype = runtime::DType::F64;
  f64.shape = Shape{3};
  EXPECT_THROW(cuda.apply(f64, f64, f64, hyper), runtime::InvalidArgument);
  layers::LayerOptions options = cuda_options();
  options.dtype = runtime::DType::F64;
  EXPECT_THROW(layers::cuda::SgdUpdateCuda{options}, runtime::InvalidArgument);
  EXPECT_THROW(layers::cuda::SgdUpdateCuda{layers::LayerOptions{}}, runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
