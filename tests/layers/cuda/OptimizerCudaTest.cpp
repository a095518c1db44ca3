// The CUDA optimizers against OptimizerCpu over several parameters of a table of sizes, for every
// optimizer with and without clipping and with excluded parameters, over consecutive steps; and
// the step is bitwise repeatable. Within 1e-5 relative to 1 + |value|: the sums of squares
// (clipping, LARS) run in float on the device and in double on the host, and either compiler may
// fuse the rules into FMAs.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layers/Optimizer.hpp"
#include "runtime/Error.hpp"
#include "tests/layers/cuda/LayerRun.hpp"

namespace vdnn::test {
namespace {

using layers::OptimizerConfig;
using layers::OptimizerKind;
using layers::OptimizerSlot;

class OptimizerCuda : public CudaTest {};

constexpr double kOptimizerTolerance = 1e-5;
constexpr int kSteps = 4;

const std::vector<Shape> kShapes = {Shape{1}, Shape{10}, Shape{64, 3, 3, 3}, Shape{1000, 513},
                                    Shape{256}};

// One parameter on the host (for the CPU) and on the device, with gradient and two state tensors.
struct Tensors {
  std::vector<float> param, grad, first, second;
  std::unique_ptr<DeviceTensor> device_param, device_first, device_second;
};

OptimizerSlot host_slot(Tensors& t, const Shape& shape, bool excluded) {
  OptimizerSlot s;
  s.param = {t.param.data(), shape};
  s.grad = {t.grad.data(), shape};
  s.state = {TensorView{t.first.data(), shape}, TensorView{t.second.data(), shape}};
  s.excluded = excluded;
  return s;
}

std::vector<OptimizerConfig> configurations() {
  std::vector<OptimizerConfig> out;
  for (const OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::AdamW, OptimizerKind::Lars}) {
    for (const double clip : {0.0, 0.5}) {
      OptimizerConfig c;
      c.kind = kind;
      c.clip_grad_norm = clip;
      c.weight_decay = kind == OptimizerKind::AdamW ? 0.05 : 5e-4;
      out.push_back(c);
    }
  }
  OptimizerConfig nesterov;
  nesterov.nesterov = true;
  OptimizerConfig dampened;
  dampened.dampening = 0.3;
  out.push_back(nesterov);
  out.push_back(dampened);
  return out;
}

TEST_F(OptimizerCuda, MatchesCpuOverSeveralSteps) {
  for (const OptimizerConfig& config : configurations()) {
    SCOPED_TRACE(std::string(layers::optimizer_name(config.kind)) + " clip=" +
                 std::to_string(config.clip_grad_norm) + (config.nesterov ? " nesterov" : "") +
                 " dampening=" + std::to_string(config.dampening));
    const auto cpu = layers::make_optimizer(layers::Backend::Cpu, {}, config, kShapes.size());
    const auto cuda =
        layers::make_optimizer(layers::Backend::Cuda, cuda_options(), config, kShapes.size());
    std::vector<Tensors> tensors(kShapes.size());
    for (std::size_t i = 0; i < kShapes.size(); ++i) {
      Tensors& t = tensors[i];
      t.param = uniform(kShapes[i].numel(), 300 + i);
      // NaN: the first step must overwrite the state, not read it.
      t.first.assign(t.param.size(), kNan);
      t.second.assign(t.param.size(), kNan);
      t.device_param = std::make_unique<DeviceTensor>(stream(), t.param, kShapes[i]);
      t.device_first = std::make_unique<DeviceTensor>(stream(), t.first, kShapes[i]);
      t.device_second = std::make_unique<DeviceTensor>(stream(), t.second, kShapes[i]);
    }
    for (int step = 0; step < kSteps; ++step) {
      std::vector<std::unique_ptr<DeviceTensor>> grads;
      std::vector<OptimizerSlot> host_slots;
      std::vector<OptimizerSlot> device_slots;
      for (std::size_t i = 0; i < kShapes.size(); ++i) {
        Tensors& t = tensors[i];
        const bool excluded = kShapes[i].rank() == 1 && i % 2 == 0;  // as --no-decay-bn-bias
        t.grad = uniform(kShapes[i].numel(), 310 + 10 * i + static_cast<std::uint64_t>(step));
        grads.push_back(std::make_unique<DeviceTensor>(stream(), t.grad, kShapes[i]));
        host_slots.push_back(host_slot(t, kShapes[i], excluded));
        device_slots.push_back({t.device_param->view(),
                                grads.back()->view(),
                                {t.device_first->view(), t.device_second->view()},
                                excluded});
      }
      cuda->step(device_slots, 0.05, step);
      cpu->step(host_slots, 0.05, step);
      for (std::size_t i = 0; i < kShapes.size(); ++i) {
        SCOPED_TRACE(kShapes[i].to_string() + " after step " + std::to_string(step));
        const Tensors& t = tensors[i];
        // Waits for the update before the gradients go.
        EXPECT_TRUE(all_near(t.device_param->download_now(stream()), t.param, kOptimizerTolerance));
        EXPECT_TRUE(all_near(t.device_first->download_now(stream()), t.first, kOptimizerTolerance));
        if (config.kind == OptimizerKind::AdamW) {
          EXPECT_TRUE(
              all_near(t.device_second->download_now(stream()), t.second, kOptimizerTolerance));
        }
      }
    }
  }
}

TEST_F(OptimizerCuda, ClippedLarsStepIsBitwiseRepeatable) {
  OptimizerConfig config;
  config.kind = OptimizerKind::Lars;
  config.clip_grad_norm = 0.1;
  const Shape shape{1000, 513};
  const std::vector<float> start = uniform(shape.numel(), 400);
  const std::vector<float> grad = uniform(shape.numel(), 401);
  std::vector<std::vector<float>> results;
  for (int run = 0; run < 2; ++run) {
    const auto cuda = layers::make_optimizer(layers::Backend::Cuda, cuda_options(), config, 1);
    const DeviceTensor param(stream(), start, shape);
    const DeviceTensor g(stream(), grad, shape);
    const DeviceTensor buffer(stream(), start, shape);
    cuda->step({{param.view(), g.view(), {buffer.view(), TensorView{}}, false}}, 0.1, 0);
    results.push_back(param.download_now(stream()));
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST_F(OptimizerCuda, RejectsMismatchedShapesAndOtherDtypes) {
  const auto cuda = layers::make_optimizer(layers::Backend::Cuda, cuda_options(), {}, 1);
  const DeviceTensor a(stream(), std::vector<float>(6, 1.0f), Shape{2, 3});
  const DeviceTensor b(stream(), std::vector<float>(6, 1.0f), Shape{3, 2});
  EXPECT_THROW(cuda->step({{a.view(), b.view(), {a.view(), TensorView{}}, false}}, 0.1, 0),
               runtime::InvalidArgument);
  EXPECT_THROW(cuda->step({}, 0.1, 0), runtime::InvalidArgument);
  layers::LayerOptions options = cuda_options();
  options.dtype = runtime::DType::F64;
  EXPECT_THROW(layers::make_optimizer(layers::Backend::Cuda, options, {}, 1),
               runtime::InvalidArgument);
  EXPECT_THROW(layers::make_optimizer(layers::Backend::Cuda, layers::LayerOptions{}, {}, 1),
               runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
