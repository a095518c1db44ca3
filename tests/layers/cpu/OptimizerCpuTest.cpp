// The CPU optimizers against values worked out by hand from PyTorch's formulas (torch.optim.SGD
// with dampening and Nesterov, torch.optim.AdamW, apex's LARC trust ratio, clip_grad_norm_), in
// F64 over a few steps; weight-decay exclusion; and the configurations validate refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "layers/Optimizer.hpp"
#include "runtime/Error.hpp"

namespace vdnn::test {
namespace {

using layers::OptimizerConfig;
using layers::OptimizerKind;
using layers::OptimizerSlot;
using runtime::Shape;

constexpr double kTight = 1e-12;

// One F64 parameter with its gradient and state, as views for the optimizer.
struct Param {
  std::vector<double> value;
  std::vector<double> grad;
  std::vector<double> first;
  std::vector<double> second;
  bool excluded = false;

  explicit Param(std::vector<double> v, bool exclude = false)
      : value(std::move(v)),
        grad(value.size()),
        first(value.size()),
        second(value.size()),
        excluded(exclude) {}

  OptimizerSlot slot() {
    const Shape shape{static_cast<std::int64_t>(value.size())};
    OptimizerSlot s;
    s.param = {value.data(), shape, runtime::DType::F64};
    s.grad = {grad.data(), shape, runtime::DType::F64};
    s.state = {runtime::TensorView{first.data(), shape, runtime::DType::F64},
               runtime::TensorView{second.data(), shape, runtime::DType::F64}};
    s.excluded = excluded;
    return s;
  }
};

// Runs one step per entry of `grads` (one gradient vector per step, for every parameter).
void run(const OptimizerConfig& config, std::vector<Param*> params,
         const std::vector<std::vector<std::vector<double>>>& grads, double lr) {
  const auto optimizer = layers::make_optimizer(layers::Backend::Cpu, {}, config, params.size());
  for (std::size_t step = 0; step < grads.size(); ++step) {
    std::vector<OptimizerSlot> slots;
    for (std::size_t i = 0; i < params.size(); ++i) {
      params[i]->grad = grads[step][i];
      slots.push_back(params[i]->slot());
    }
    optimizer->step(slots, lr, static_cast<std::int64_t>(step));
  }
}

OptimizerConfig config(OptimizerKind kind, double momentum, double weight_decay) {
  OptimizerConfig c;
  c.kind = kind;
  c.momentum = momentum;
  c.weight_decay = weight_decay;
  return c;
}

TEST(OptimizerCpu, SgdDampeningAppliesFromTheSecondStep) {
  OptimizerConfig c = config(OptimizerKind::Sgd, 0.9, 0.1);
  c.dampening = 0.5;
  Param p({1.0});
  run(c, {&p}, {{{1.0}}, {{2.0}}, {{-1.0}}}, 0.1);
  // d1 = 1 + 0.1 = 1.1, buf = 1.1, p = 0.89; d2 = 2 + 0.089 = 2.089, buf = 0.99 + 1.0445 =
  // 2.0345, p = 0.68655; d3 = -1 + 0.068655, buf = 1.83105 - 0.4656725 = 1.3653775.
  EXPECT_NEAR(p.first[0], 1.3653775, kTight);
  EXPECT_NEAR(p.value[0], 0.55001225, kTight);
}

TEST(OptimizerCpu, SgdNesterovLooksAhead) {
  OptimizerConfig c = config(OptimizerKind::Sgd, 0.9, 0.0);
  c.nesterov = true;
  Param p({1.0});
  run(c, {&p}, {{{1.0}}, {{2.0}}}, 0.1);
  // buf1 = 1, step 1 + 0.9 = 1.9, p = 0.81; buf2 = 0.9 + 2 = 2.9, step 2 + 2.61 = 4.61.
  EXPECT_NEAR(p.first[0], 2.9, kTight);
  EXPECT_NEAR(p.value[0], 0.349, kTight);
}

TEST(OptimizerCpu, SgdWithoutMomentumIsPlainGradientDescent) {
  OptimizerConfig c = config(OptimizerKind::Sgd, 0.0, 0.0);
  c.dampening = 0.3;  // ignored without momentum, as in PyTorch
  Param p({1.0});
  run(c, {&p}, {{{1.0}}, {{2.0}}}, 0.1);
  EXPECT_NEAR(p.value[0], 0.7, kTight);
}

TEST(OptimizerCpu, AdamWMatchesTorchOverTwoSteps) {
  OptimizerConfig c = config(OptimizerKind::AdamW, 0.0, 0.01);
  Param p({1.0});
  run(c, {&p}, {{{0.5}}, {{-0.25}}}, 0.1);
  // Step 1: p = 0.999, m = 0.05, v = 2.5e-4, step size 0.1 / 0.1, denominator
  // sqrt(2.5e-4 / 1e-3) + 1e-8 = 0.5 + 1e-8: p = 0.999 - 0.05 / (0.5 + 1e-8) = 0.899000002.
  // Step 2: p *= 0.999; m = 0.045 - 0.025 = 0.02; v = 2.4975e-4 + 6.25e-5 = 3.1225e-4; step size
  // 0.1 / 0.19, denominator sqrt(3.1225e-4 / 0.001999) + 1e-8.
  EXPECT_NEAR(p.first[0], 0.02, kTight);
  EXPECT_NEAR(p.second[0], 3.1225e-4, kTight);
  const double expected =
      0.899000002 * 0.999 - (0.1 / 0.19) * 0.02 / (std::sqrt(3.1225e-4 / 0.001999) + 1e-8);
  EXPECT_NEAR(p.value[0], expected, kTight);
  EXPECT_NEAR(p.value[0], 0.8714672987058463, 1e-12);
}

TEST(OptimizerCpu, LarsScalesEachParameterByItsTrustRatio) {
  OptimizerConfig c = config(OptimizerKind::Lars, 0.9, 0.1);
  c.lars_trust = 0.001;
  Param w({3.0, 4.0});
  Param bias({3.0, 4.0}, /*exclude=*/true);
  run(c, {&w, &bias}, {{{0.6, 0.8}, {0.6, 0.8}}}, 0.1);
  // ||w|| = 5, ||g|| = 1: trust = 0.001 * 5 / (1 + 0.1 * 5) = 1 / 300; d = (g + 0.1 w) / 300 =
  // (0.003, 0.004); p = w - 0.1 d. The excluded one is plain SGD: p = w - 0.1 g.
  EXPECT_NEAR(w.value[0], 2.9997, kTight);
  EXPECT_NEAR(w.value[1], 3.9996, kTight);
  EXPECT_NEAR(w.first[1], 0.004, kTight);
  EXPECT_NEAR(bias.value[0], 2.94, kTight);
  EXPECT_NEAR(bias.value[1], 3.92, kTight);
}

TEST(OptimizerCpu, LarsLeavesAZeroWeightUnscaled) {
  OptimizerConfig c = config(OptimizerKind::Lars, 0.0, 0.0);
  Param zero({0.0, 0.0});
  run(c, {&zero}, {{{1.0, -2.0}}}, 0.5);
  EXPECT_NEAR(zero.value[0], -0.5, kTight);
  EXPECT_NEAR(zero.value[1], 1.0, kTight);
}

TEST(OptimizerCpu, ClippingScalesByTheGlobalNorm) {
  OptimizerConfig c = config(OptimizerKind::Sgd, 0.0, 0.0);
  c.clip_grad_norm = 1.0;
  Param a({0.0});
  Param b({0.0});
  run(c, {&a, &b}, {{{3.0}, {4.0}}}, 1.0);
  // Total norm 5: every gradient times 1 / (5 + 1e-6); the gradients themselves stay.
  EXPECT_NEAR(a.value[0], -3.0 / (5.0 + 1e-6), kTight);
  EXPECT_NEAR(b.value[0], -4.0 / (5.0 + 1e-6), kTight);
  EXPECT_EQ(a.grad[0], 3.0);
  c.clip_grad_norm = 10.0;  // above the norm: no scaling
  Param d({0.0});
  Param e({0.0});
  run(c, {&d, &e}, {{{3.0}, {4.0}}}, 1.0);
  EXPECT_EQ(d.value[0], -3.0);
  EXPECT_EQ(e.value[0], -4.0);
}

TEST(OptimizerCpu, ClippingAppliesToAdamWAndLars) {
  for (const OptimizerKind kind : {OptimizerKind::AdamW, OptimizerKind::Lars}) {
    SCOPED_TRACE(layers::optimizer_name(kind));
    OptimizerConfig c = config(kind, 0.0, 0.0);
    Param clipped({1.0, 1.0});
    Param reference({1.0, 1.0});
    c.clip_grad_norm = 0.5;
    run(c, {&clipped}, {{{3.0, 4.0}}}, 0.1);
    // The same step on the gradient already scaled by 0.5 / (5 + 1e-6), unclipped.
    c.clip_grad_norm = 0.0;
    const double scale = 0.5 / (5.0 + 1e-6);
    run(c, {&reference}, {{{3.0 * scale, 4.0 * scale}}}, 0.1);
    EXPECT_NEAR(clipped.value[0], reference.value[0], kTight);
    EXPECT_NEAR(clipped.value[1], reference.value[1], kTight);
  }
}

TEST(OptimizerCpu, ExcludedParametersAreNotDecayed) {
  for (const OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::AdamW}) {
    SCOPED_TRACE(layers::optimizer_name(kind));
    const OptimizerConfig c = config(kind, 0.0, 0.5);
    Param decayed({1.0});
    Param excluded({1.0}, /*exclude=*/true);
    run(c, {&decayed, &excluded}, {{{0.0}, {0.0}}}, 0.1);
    EXPECT_NEAR(decayed.value[0], 0.95, kTight);  // SGD: 1 - 0.1 * 0.5; AdamW: 1 * (1 - 0.05)
    EXPECT_EQ(excluded.value[0], 1.0);
  }
}

TEST(OptimizerCpu, ValidateRefusesOutOfRangeValues) {
  const auto refused = [](void (*change)(OptimizerConfig&)) {
    OptimizerConfig c;
    change(c);
    EXPECT_THROW(layers::validate(c), runtime::InvalidArgument);
    EXPECT_THROW(layers::make_optimizer(layers::Backend::Cpu, {}, c, 1), runtime::InvalidArgument);
  };
  refused([](OptimizerConfig& c) { c.momentum = 1.5; });
  refused([](OptimizerConfig& c) { c.dampening = -0.1; });
  refused([](OptimizerConfig& c) {
    c.nesterov = true;
    c.momentum = 0.0;
  });
  refused([](OptimizerConfig& c) {
    c.nesterov = true;
    c.dampening = 0.1;
  });
  refused([](OptimizerConfig& c) { c.weight_decay = NAN; });
  refused([](OptimizerConfig& c) { c.adam_beta1 = 1.0; });
  refused([](OptimizerConfig& c) { c.adam_beta2 = -0.5; });
  refused([](OptimizerConfig& c) { c.adam_eps = 0.0; });
  refused([](OptimizerConfig& c) { c.lars_trust = -1.0; });
  refused([](OptimizerConfig& c) { c.clip_grad_norm = -1.0; });
  OptimizerConfig nesterov;
  nesterov.nesterov = true;
  EXPECT_NO_THROW(layers::validate(nesterov));
}

TEST(OptimizerCpu, NamesParseAndTheRestIsRefused) {
  for (const std::string& name : layers::optimizer_names()) {
    EXPECT_EQ(layers::optimizer_name(layers::parse_optimizer(name)), name);
  }
  try {
    layers::parse_optimizer("adam");
    FAIL() << "adam parsed";
  } catch (const runtime::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("\"adamw\""), std::string::npos) << e.what();
  }
  EXPECT_EQ(layers::state_buffers(OptimizerKind::AdamW), 2);
  EXPECT_EQ(layers::state_buffers(OptimizerKind::Lars), 1);
}

TEST(OptimizerCpu, StepRefusesAnotherSlotCountOrMismatchedShapes) {
  const auto optimizer = layers::make_optimizer(layers::Backend::Cpu, {}, OptimizerConfig{}, 1);
  Param p({1.0, 2.0});
  EXPECT_THROW(optimizer->step({}, 0.1, 0), runtime::InvalidArgument);
  OptimizerSlot s = p.slot();
  s.grad.shape = Shape{1};
  EXPECT_THROW(optimizer->step({s}, 0.1, 0), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
