// MaxPool2dCpu, AvgPool2dCpu and GlobalAvgPoolCpu against direct loops in double (forward and
// input gradient, overwrite and accumulate), in F64 and F32, plus max-pool tie and padding rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <variant>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/Registry.hpp"
#include "layers/cpu/AvgPool2dCpu.hpp"
#include "layers/cpu/GlobalAvgPoolCpu.hpp"
#include "layers/cpu/MaxPool2dCpu.hpp"

namespace vdnn::layers::cpu {
namespace {

using runtime::Shape;
using test::avg_pool;
using test::cast;
using test::expect_close;
using test::max_pool;
using test::PoolCase;
using test::random_values;
using test::view_of;

std::vector<PoolCase> cases() {
  return {
      {"max_2x2_stride_default", Shape{2, 3, 6, 8}, max_pool({2, 2}, {0, 0}, {0, 0})},
      {"max_3x3_stride2_pad1", Shape{2, 2, 9, 7}, max_pool({3, 3}, {2, 2}, {1, 1})},
      {"max_overlapping_3x3_stride1", Shape{1, 2, 5, 6}, max_pool({3, 3}, {1, 1}, {1, 1})},
      {"max_2x3_nonsquare", Shape{2, 1, 7, 9}, max_pool({2, 3}, {1, 2}, {1, 1})},
      {"max_accumulate", Shape{2, 2, 8, 8}, max_pool({3, 3}, {2, 2}, {1, 1}), true},
      {"max_ceil_3x3_stride2", Shape{2, 2, 8, 7}, max_pool({3, 3}, {2, 2}, {0, 0}, true)},
      {"max_ceil_2x3_pad1_nonsquare", Shape{1, 3, 7, 10}, max_pool({2, 3}, {2, 2}, {1, 1}, true)},
      {"max_ceil_accumulate", Shape{2, 2, 10, 10}, max_pool({3, 3}, {2, 2}, {0, 0}, true), true},
      {"avg_2x2_stride_default", Shape{2, 3, 6, 8}, avg_pool({2, 2}, {0, 0}, {0, 0}, true)},
      {"avg_3x3_pad1_include_pad", Shape{2, 2, 7, 7}, avg_pool({3, 3}, {2, 2}, {1, 1}, true)},
      {"avg_3x3_pad1_exclude_pad", Shape{2, 2, 7, 7}, avg_pool({3, 3}, {2, 2}, {1, 1}, false)},
      {"avg_2x4_nonsquare_exclude_pad", Shape{1, 3, 6, 9}, avg_pool({2, 4}, {1, 3}, {1, 2}, false)},
      {"avg_accumulate", Shape{2, 2, 6, 6}, avg_pool({3, 3}, {1, 1}, {1, 1}, true), true},
      {"global", Shape{3, 4, 5, 6}, GlobalAvgPoolSpec{}},
      {"global_accumulate", Shape{2, 3, 7, 7}, GlobalAvgPoolSpec{}, true},
  };
}

struct PoolData {
  std::vector<double> x, dy, dx_before;
  std::vector<double> y, dx;
};

// Window of a pooling spec, with global average pooling as one window over the whole plane.
struct RefWindow {
  Pair kernel, stride, padding;
  bool is_max = false;
  bool count_include_pad = true;
};

RefWindow ref_window(const LayerSpec& spec, const Shape& input) {
  if (const auto* m = std::get_if<MaxPool2dSpec>(&spec)) {
    return {
        m->kernel,
        {m->stride[0] ? m->stride[0] : m->kernel[0], m->stride[1] ? m->stride[1] : m->kernel[1]},
        m->padding,
        true,
        true};
  }
  if (const auto* a = std::get_if<AvgPool2dSpec>(&spec)) {
    return {
        a->kernel,
        {a->stride[0] ? a->stride[0] : a->kernel[0], a->stride[1] ? a->stride[1] : a->kernel[1]},
        a->padding,
        false,
        a->count_include_pad};
  }
  return {{input.h(), input.w()}, {1, 1}, {0, 0}, false, true};
}

// Direct pooling in double: max takes the first maximum in scan order, padding never wins;
// average divides by the kernel area or by the pixels inside the input.
PoolData reference(const PoolCase& c, std::uint64_t seed) {
  const Shape out = infer_output_shape(c.spec, {c.input});
  const RefWindow win = ref_window(c.spec, c.input);
  const std::int64_t h = c.input.h(), w = c.input.w();
  std::mt19937_64 rng(seed);
  PoolData d;
  d.x = random_values(c.input.numel(), rng);
  d.dy = random_values(out.numel(), rng);
  d.dx_before =
      c.accumulate ? random_values(c.input.numel(), rng) : std::vector<double>(d.x.size(), 0.0);
  d.y.assign(d.dy.size(), 0.0);
  d.dx = d.dx_before;
  std::size_t yi = 0;
  for (std::int64_t plane = 0; plane < out.n() * out.c(); ++plane) {
    for (std::int64_t oh = 0; oh < out.h(); ++oh) {
      for (std::int64_t ow = 0; ow < out.w(); ++ow, ++yi) {
        std::vector<std::size_t> inside;
        for (std::int64_t ki = 0; ki < win.kernel[0]; ++ki) {
          for (std::int64_t kj = 0; kj < win.kernel[1]; ++kj) {
            const std::int64_t ih = oh * win.stride[0] - win.padding[0] + ki;
            const std::int64_t iw = ow * win.stride[1] - win.padding[1] + kj;
            if (ih >= 0 && ih < h && iw >= 0 && iw < w) {
              inside.push_back(static_cast<std::size_t>((plane * h + ih) * w + iw));
            }
          }
        }
        if (win.is_max) {
          std::size_t best = inside.front();
          for (std::size_t i : inside) best = d.x[i] > d.x[best] ? i : best;
          d.y[yi] = d.x[best];
          d.dx[best] += d.dy[yi];
          continue;
        }
        const double divisor = win.count_include_pad
                                   ? static_cast<double>(win.kernel[0] * win.kernel[1])
                                   : static_cast<double>(inside.size());
        for (std::size_t i : inside) {
          d.y[yi] += d.x[i] / divisor;
          d.dx[i] += d.dy[yi] / divisor;
        }
      }
    }
  }
  return d;
}

// Forward and backward at precision T; backward gets only what backward_needs() declares.
template <typename T>
void check_against_reference(const PoolCase& c, const PoolData& d, double tolerance) {
  const auto layer =
      make_layer(Backend::Cpu, c.spec, {c.input}, LayerOptions{runtime::dtype_of<T>(), 0});
  ASSERT_EQ(layer->workspace_bytes(), 0u);
  std::vector<T> x = cast<T>(d.x), dy = cast<T>(d.dy), dx = cast<T>(d.dx_before);
  if (!c.accumulate) std::fill(dx.begin(), dx.end(), T(-7));  // must be overwritten
  std::vector<T> y(d.y.size(), T(-7));

  ForwardArgs fwd;
  fwd.inputs = {view_of(x, c.input)};
  fwd.output = view_of(y, layer->output_shape());
  layer->forward(fwd);
  expect_close(y, d.y, tolerance, "output");

  const BackwardNeeds needs = backward_needs(c.spec);
  BackwardArgs bwd;
  bwd.inputs = {needs.input(0) ? fwd.inputs[0] : TensorView{}};
  bwd.output = needs.output ? fwd.output : TensorView{};
  bwd.grad_output = view_of(dy, layer->output_shape());
  bwd.grad_inputs = {GradTarget{view_of(dx, c.input), c.accumulate}};
  layer->backward(bwd);
  expect_close(dx, d.dx, tolerance, "grad input");
}

template <typename T>
void check_all_cases(double tolerance) {
  std::uint64_t seed = 1;
  for (const PoolCase& c : cases()) {
    SCOPED_TRACE(c.name);
    check_against_reference<T>(c, reference(c, seed++), tolerance);
  }
}

TEST(PoolingCpu, MatchesReferenceF64) { check_all_cases<double>(1e-12); }

TEST(PoolingCpu, MatchesReferenceF32) { check_all_cases<float>(1e-5); }

TEST(PoolingCpu, CeilModeShapesFollowPyTorch) {
  const auto pooled = [](const MaxPool2dSpec& spec, const Shape& input) {
    return infer_output_shape(spec, {input});
  };
  // torchvision's GoogLeNet: 112 -> 56 -> ... where floor mode gives 55.
  EXPECT_EQ(pooled(max_pool({3, 3}, {2, 2}, {0, 0}, true), Shape{1, 1, 112, 112}),
            (Shape{1, 1, 56, 56}));
  EXPECT_EQ(pooled(max_pool({3, 3}, {2, 2}, {0, 0}, false), Shape{1, 1, 112, 112}),
            (Shape{1, 1, 55, 55}));
  EXPECT_EQ(pooled(max_pool({2, 2}, {2, 2}, {0, 0}, true), Shape{1, 1, 14, 14}),
            (Shape{1, 1, 7, 7}));  // windows that tile the input: no extra one
  // Height: the extra window would start at row 7 = the input's end, all padding: left out.
  EXPECT_EQ(pooled(max_pool({2, 3}, {2, 2}, {1, 1}, true), Shape{1, 3, 7, 10}),
            (Shape{1, 3, 4, 6}));
}

TEST(PoolingCpu, MaxPoolTiesGoToFirstMaximumInScanOrder) {
  // Overlapping 2x2 windows over a constant plane: every window's first pixel is its top-left.
  MaxPool2dCpu layer(max_pool({2, 2}, {1, 1}, {0, 0}), {Shape{1, 1, 3, 3}},
                     LayerOptions{DType::F64, 0});
  std::vector<double> x(9, 2.5), y(4), dy = {1.0, 10.0, 100.0, 1000.0}, dx(9);
  ForwardArgs fwd;
  fwd.inputs = {view_of(x, Shape{1, 1, 3, 3})};
  fwd.output = view_of(y, Shape{1, 1, 2, 2});
  layer.forward(fwd);
  EXPECT_EQ(y, std::vector<double>(4, 2.5));
  BackwardArgs bwd;
  bwd.inputs = fwd.inputs;
  bwd.output = fwd.output;
  bwd.grad_output = view_of(dy, Shape{1, 1, 2, 2});
  bwd.grad_inputs = {GradTarget{view_of(dx, Shape{1, 1, 3, 3}), false}};
  layer.backward(bwd);
  EXPECT_EQ(dx, (std::vector<double>{1.0, 10.0, 0.0, 100.0, 1000.0, 0.0, 0.0, 0.0, 0.0}));
}

TEST(PoolingCpu, MaxPoolPaddingNeverWins) {
  // All inputs negative: a zero-valued padding would win at every border window.
  MaxPool2dCpu layer(max_pool({3, 3}, {2, 2}, {1, 1}), {Shape{1, 1, 4, 4}},
                     LayerOptions{DType::F32, 0});
  std::vector<float> x(16), y(4);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -1.0f - static_cast<float>(i);
  ForwardArgs fwd;
  fwd.inputs = {view_of(x, Shape{1, 1, 4, 4})};
  fwd.output = view_of(y, Shape{1, 1, 2, 2});
  layer.forward(fwd);
  EXPECT_EQ(y, (std::vector<float>{-1.0f, -2.0f, -5.0f, -6.0f}));
}

TEST(PoolingCpu, MaxPoolPropagatesNaN) {
  MaxPool2dCpu layer(max_pool({2, 2}, {0, 0}, {0, 0}), {Shape{1, 1, 2, 2}},
                     LayerOptions{DType::F64, 0});
  std::vector<double> x = {1.0, std::numeric_limits<double>::quiet_NaN(), 3.0, 2.0}, y(1);
  ForwardArgs fwd;
  fwd.inputs = {view_of(x, Shape{1, 1, 2, 2})};
  fwd.output = view_of(y, Shape{1, 1, 1, 1});
  layer.forward(fwd);
  EXPECT_TRUE(std::isnan(y[0]));
}

TEST(PoolingCpu, EmptyInputGradientIsSkipped) {
  for (const PoolCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto layer = make_layer(Backend::Cpu, c.spec, {c.input}, LayerOptions{DType::F64, 0});
    std::vector<double> x(static_cast<std::size_t>(c.input.numel())),
        dy(static_cast<std::size_t>(layer->output_shape().numel()));
    BackwardArgs bwd;
    bwd.inputs = {view_of(x, c.input)};
    bwd.output = TensorView{};
    bwd.grad_output = view_of(dy, layer->output_shape());
    bwd.grad_inputs = {GradTarget{}};
    EXPECT_NO_THROW(layer->backward(bwd));
  }
}

}  // namespace
}  // namespace vdnn::layers::cpu
