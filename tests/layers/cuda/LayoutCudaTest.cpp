// The CUDA layers that take NHWC (Note [Layout]) against their CPU layers, each built through
// make_layer in an NCHW and an NHWC network over a table of shapes, with GradTarget::accumulate off
// and on: ReLU, the smooth activations, Mul (plain and broadcast), Add, Dropout, Concat, Flatten,
// Linear, the loss, the pooling layers (max-pool ties included) and ConvNeXt's layernorm2d,
// layer_scale and stochastic_depth. Also make_layer's refusal of layout pairs a layer cannot take.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/Registry.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "runtime/Error.hpp"

namespace vdnn::test {
namespace {

using layers::LayerSpec;
using runtime::Layout;
using runtime::Shape;

// Selection, copies, sums of two values and products by powers of two: bitwise the CPU's.
constexpr double kExact = 0.0;
// cuDNN may scale a window sum by the reciprocal of the divisor; the global mean sums in a tree.
constexpr double kAverageTolerance = 1e-6;
// The smooth activations: the device's expf and erff may differ from the host's by a few ulps.
constexpr double kActivationTolerance = 1e-6;
// GEMMs and the loss reduce in another order than Eigen.
constexpr double kReductionTolerance = 1e-5;

// One row of a table: a layer and its inputs (NCHW-logical), compared within `tolerance`.
struct LayoutCase {
  std::string name;
  LayerSpec spec;
  std::vector<Shape> inputs;
  double tolerance = kExact;
  int input_levels = 0;  // > 0: inputs of this many values, so that max-pool windows hold ties
};

// The layout a network run in `network` gives a tensor of `shape`, as graph::Graph::use_layout
// does: rank-4 tensors take it, rank-2 ones stay NCHW-logical.
Layout layout_in(Layout network, const Shape& shape) {
  return shape.rank() == 4 ? network : Layout::Nchw;
}

layers::DropoutSpec dropout(double p) {
  layers::DropoutSpec spec;
  spec.p = p;
  return spec;
}

const std::vector<LayerSpec>& smooth_activations() {
  static const std::vector<LayerSpec> kSpecs = {layers::SiluSpec{},    layers::GeluSpec{},
                                                layers::SigmoidSpec{}, layers::HardswishSpec{},
                                                layers::Relu6Spec{},   layers::HardsigmoidSpec{}};
  return kSpecs;
}

class LayoutCuda : public CudaLayerTest {
 protected:
  static constexpr std::uint64_t kLayerSeed = 7;

  // make_layer's CUDA layer of `spec` for (layout, input_layout).
  std::unique_ptr<layers::Layer> make(const LayerSpec& spec, const std::vector<Shape>& inputs,
                                      Layout layout, Layout input_layout) {
    layers::LayerOptions o = options();
    o.seed = kLayerSeed;
    o.layout = layout;
    o.input_layout = input_layout;
    return layers::make_layer(layers::Backend::Cuda, spec, inputs, o);
  }

  // Every case in an NCHW and an NHWC network, overwriting and accumulating input gradients.
  void expect_cases_match(const std::vector<LayoutCase>& cases) {
    for (const LayoutCase& c : cases) {
      const Shape output = layers::infer_output_shape(c.spec, c.inputs);
      for (const Layout network : {Layout::Nchw, Layout::Nhwc}) {
        const Layout layout = layout_in(network, output);
        const Layout input_layout = layout_in(network, c.inputs.front());
        for (const bool accumulate : {false, true}) {
          SCOPED_TRACE(c.name + " " + runtime::layout_name(input_layout) + " -> " +
                       runtime::layout_name(layout) + (accumulate ? " accumulate" : ""));
          const auto layer = make(c.spec, c.inputs, layout, input_layout);
          ASSERT_EQ(layer->layout(), layout);
          ASSERT_EQ(layer->input_layout(), input_layout);
          StepSettings settings;
          settings.accumulate = accumulate;
          settings.input_levels = c.input_levels;
          settings.step = 3;
          settings.layer_seed = kLayerSeed;
          EXPECT_TRUE(cuda_matches_cpu(context(), *layer, c.tolerance, settings));
        }
      }
    }
  }
};

// Odd extents, channel counts that are not multiples of 4, a 1 x 1 plane, one channel, rank 2.
const std::vector<Shape>& element_shapes() {
  static const std::vector<Shape> table = {Shape{1, 1, 1, 7}, Shape{2, 3, 4, 5},  Shape{3, 5, 1, 1},
                                           Shape{2, 6, 7, 9}, Shape{4, 16, 7, 7}, Shape{3, 10}};
  return table;
}

TEST_F(LayoutCuda, ElementwiseLayersMatchCpuInBothLayouts) {
  std::vector<LayoutCase> cases;
  for (const Shape& s : element_shapes()) {
    const std::string shape = s.to_string();
    cases.push_back({"relu " + shape, layers::ReluSpec{}, {s}});
    for (const LayerSpec& activation : smooth_activations()) {
      const std::string name = std::string(layers::type_name(activation)) + " " + shape;
      cases.push_back({name, activation, std::vector<Shape>(1, s), kActivationTolerance});
    }
    cases.push_back({"add2 " + shape, layers::AddSpec{}, {s, s}});
    if (s.rank() == 4) {  // mul takes feature maps; a broadcast scale's gradient sums in float
      cases.push_back({"mul " + shape, layers::MulSpec{}, {s, s}});
      const std::vector<Shape> inputs = {s, Shape::nchw(s.n(), s.c(), 1, 1)};
      cases.push_back({"mul broadcast " + shape, layers::MulSpec{}, inputs, kReductionTolerance});
    }
    cases.push_back({"add3 " + shape, layers::AddSpec{}, {s, s, s}});
    // 1 / (1 - p) is a power of two: an accumulated product is exact, FMA or not.
    cases.push_back({"dropout0.5 " + shape, dropout(0.5), {s}});
    cases.push_back({"dropout0.75 " + shape, dropout(0.75), {s}});
    cases.push_back({"flatten " + shape, layers::FlattenSpec{}, {s}});
  }
  expect_cases_match(cases);
}

TEST_F(LayoutCuda, ConcatMatchesCpuInBothLayouts) {
  struct Rows {
    std::int64_t n, h, w;
    std::vector<std::int64_t> channels;
  };
  const std::vector<Rows> rows = {{1, 1, 1, {1, 1}},
                                  {2, 3, 5, {1, 2}},
                                  {3, 4, 4, {3, 5, 2}},
                                  {2, 1, 1, {3, 6}},
                                  {2, 7, 7, {16, 3, 8, 5}},
                                  // Rows of whole 16-byte vectors (copy_rows' vector kernel), as
                                  // DenseNet's 32 new channels behind a wide concatenation.
                                  {2, 5, 5, {64, 32}},
                                  {3, 2, 3, {8, 16, 8}}};
  std::vector<LayoutCase> cases;
  for (const Rows& r : rows) {
    LayoutCase c{"concat", layers::ConcatSpec{}, {}};
    for (const std::int64_t channels : r.channels) {
      c.inputs.push_back(Shape{r.n, channels, r.h, r.w});
      c.name += " " + c.inputs.back().to_string();
    }
    cases.push_back(c);
  }
  expect_cases_match(cases);
}

// ConvNeXt's layers: channel counts below, at and past a warp (the NHWC statistics take a warp a
// pixel), odd planes, a 1 x 1 plane.
std::vector<LayoutCase> convnext_cases() {
  layers::LayerNorm2dSpec norm;
  norm.eps = 1e-6;
  std::vector<LayoutCase> cases;
  for (const Shape& s : {Shape{2, 3, 4, 5}, Shape{3, 5, 1, 1}, Shape{2, 32, 3, 3},
                         Shape{2, 40, 7, 9}, Shape{2, 96, 7, 7}}) {
    const std::string shape = s.to_string();
    // FP32 statistics and sums against the CPU's double ones.
    cases.push_back({"layernorm2d " + shape, norm, {s}, kReductionTolerance});
    cases.push_back({"layer_scale " + shape, layers::LayerScaleSpec{}, {s}, kReductionTolerance});
    // 1 / (1 - p) a power of two: exact, accumulated or not; else one product rounded once.
    layers::StochasticDepthSpec drop_path;
    drop_path.p = 0.5;
    cases.push_back({"stochastic_depth0.5 " + shape, drop_path, {s}});
    drop_path.p = 0.1;
    cases.push_back({"stochastic_depth0.1 " + shape, drop_path, {s}, kActivationTolerance});
  }
  return cases;
}

TEST_F(LayoutCuda, ConvNextLayersMatchCpuInBothLayouts) { expect_cases_match(convnext_cases()); }

// NHWC input only where its bytes are NCHW's: rank 2, or a 1 x 1 plane (after global pooling).
TEST_F(LayoutCuda, LinearAndLossMatchCpuInBothLayouts) {
  expect_cases_match({
      {"linear_bias [4, 10]", layers::LinearSpec{7, true}, {Shape{4, 10}}, kReductionTolerance},
      {"linear_bias [3, 6, 1, 1]",
       layers::LinearSpec{5, true},
       {Shape{3, 6, 1, 1}},
       kReductionTolerance},
      {"linear_no_bias [2, 37, 1, 1]",
       layers::LinearSpec{9, false},
       {Shape{2, 37, 1, 1}},
       kReductionTolerance},
      {"loss [4, 10]", layers::SoftmaxCrossEntropySpec{}, {Shape{4, 10}}, kReductionTolerance},
      {"loss [3, 7, 1, 1]",
       layers::SoftmaxCrossEntropySpec{},
       {Shape{3, 7, 1, 1}},
       kReductionTolerance},
  });
}

std::vector<LayoutCase> pooling_cases() {
  // Max pooling: inputs of three values, as after a ReLU, so that most windows hold ties, which
  // go to the first maximum in row-major order on both backends.
  const auto max_case = [](const std::string& name, const Shape& input,
                           const layers::MaxPool2dSpec& s) {
    return LayoutCase{"max_" + name, s, {input}, kExact, 3};
  };
  const auto avg_case = [](const std::string& name, const Shape& input,
                           const layers::AvgPool2dSpec& s) {
    return LayoutCase{"avg_" + name, s, {input}, kAverageTolerance};
  };
  const auto global_case = [](const Shape& input) {
    return LayoutCase{
        "global " + input.to_string(), layers::GlobalAvgPoolSpec{}, {input}, kAverageTolerance};
  };
  return {
      // 2 x 2 and 3 x 3 at stride 2: the per-cell backward, on even and odd extents.
      max_case("2x2_stride_default_odd", Shape{2, 3, 7, 9}, max_pool({2, 2}, {0, 0}, {0, 0})),
      max_case("2x2_stride2_even", Shape{2, 5, 8, 8}, max_pool({2, 2}, {2, 2}, {0, 0})),
      max_case("2x2_stride2_pad1", Shape{1, 6, 7, 6}, max_pool({2, 2}, {2, 2}, {1, 1})),
      max_case("2x2_stride2_pad1_1x1_plane", Shape{2, 5, 1, 1}, max_pool({2, 2}, {2, 2}, {1, 1})),
      max_case("3x3_stride2_pad1_odd", Shape{2, 6, 9, 7}, max_pool({3, 3}, {2, 2}, {1, 1})),
      max_case("3x3_stride2_pad1_even", Shape{3, 5, 8, 10}, max_pool({3, 3}, {2, 2}, {1, 1})),
      max_case("resnet_stem", Shape{2, 16, 28, 28}, max_pool({3, 3}, {2, 2}, {1, 1})),
      // C % 4 == 0: in NHWC four channels a thread, forward and backward.
      max_case("2x2_stride2_c8", Shape{2, 8, 8, 6}, max_pool({2, 2}, {2, 2}, {0, 0})),
      max_case("2x2_stride2_pad1_c12_odd", Shape{2, 12, 7, 9}, max_pool({2, 2}, {2, 2}, {1, 1})),
      max_case("3x3_stride2_pad1_c4_odd", Shape{3, 4, 9, 7}, max_pool({3, 3}, {2, 2}, {1, 1})),
      max_case("ceil_3x3_stride2_c8", Shape{2, 8, 8, 7}, max_pool({3, 3}, {2, 2}, {0, 0}, true)),
      max_case("3x3_stride1_pad1_c8", Shape{1, 8, 6, 7}, max_pool({3, 3}, {1, 1}, {1, 1})),
      max_case("ceil_3x3_stride2", Shape{2, 3, 8, 7}, max_pool({3, 3}, {2, 2}, {0, 0}, true)),
      max_case("ceil_3x3_stride2_pad1", Shape{1, 3, 7, 10}, max_pool({3, 3}, {2, 2}, {1, 1}, true)),
      max_case("ceil_2x2_stride2_odd", Shape{2, 7, 7, 9}, max_pool({2, 2}, {2, 2}, {0, 0}, true)),
      max_case("ceil_googlenet", Shape{2, 5, 15, 15}, max_pool({3, 3}, {2, 2}, {0, 0}, true)),
      // Other windows: the per-element backward.
      max_case("3x3_stride1_pad1", Shape{2, 5, 6, 7}, max_pool({3, 3}, {1, 1}, {1, 1})),
      max_case("2x3_nonsquare", Shape{2, 3, 7, 9}, max_pool({2, 3}, {1, 2}, {1, 1})),
      max_case("2x2_stride1", Shape{1, 6, 5, 5}, max_pool({2, 2}, {1, 1}, {0, 0})),
      max_case("3x3_stride3", Shape{2, 3, 9, 10}, max_pool({3, 3}, {3, 3}, {0, 0})),
      max_case("1x1_plane", Shape{3, 5, 1, 1}, max_pool({1, 1}, {1, 1}, {0, 0})),
      max_case("ceil_2x3_stride2_pad1", Shape{1, 3, 7, 10}, max_pool({2, 3}, {2, 2}, {1, 1}, true)),
      avg_case("2x2_stride_default_odd", Shape{2, 3, 7, 9}, avg_pool({2, 2}, {0, 0}, {0, 0}, true)),
      avg_case("3x3_stride2_pad1_include_pad", Shape{2, 5, 7, 7},
               avg_pool({3, 3}, {2, 2}, {1, 1}, true)),
      avg_case("3x3_stride2_pad1_exclude_pad", Shape{2, 5, 7, 7},
               avg_pool({3, 3}, {2, 2}, {1, 1}, false)),
      avg_case("3x3_stride1_pad1_exclude_pad", Shape{1, 6, 5, 6},
               avg_pool({3, 3}, {1, 1}, {1, 1}, false)),
      avg_case("2x4_nonsquare", Shape{1, 3, 6, 9}, avg_pool({2, 4}, {1, 3}, {1, 2}, false)),
      avg_case("densenet_transition", Shape{2, 14, 8, 8}, avg_pool({2, 2}, {2, 2}, {0, 0}, true)),
      avg_case("1x1_plane", Shape{3, 5, 1, 1}, avg_pool({1, 1}, {1, 1}, {0, 0}, true)),
      global_case(Shape{3, 5, 5, 6}),
      global_case(Shape{2, 7, 1, 1}),
      global_case(Shape{2, 37, 7, 7}),
      global_case(Shape{4, 64, 7, 7}),
      global_case(Shape{2, 6, 56, 56}),
  };
}

TEST_F(LayoutCuda, PoolingLayersMatchCpuInBothLayouts) { expect_cases_match(pooling_cases()); }

TEST_F(LayoutCuda, PoolingSkipsAnEmptyInputGradientTarget) {
  for (const LayoutCase& c : pooling_cases()) {
    SCOPED_TRACE(c.name);
    const auto layer = make(c.spec, c.inputs, Layout::Nhwc, Layout::Nhwc);
    StepSettings settings;
    settings.input_grads = false;
    settings.input_levels = c.input_levels;
    EXPECT_TRUE(cuda_matches_cpu(context(), *layer, c.tolerance, settings));
  }
}

// A layer that cannot take a pair keeps NCHW, and make_layer refuses it rather than misread memory.
TEST_F(LayoutCuda, MakeLayerRefusesPairsALayerCannotTake) {
  const Shape planes{2, 3, 2, 2};
  // Linear and the loss read NCHW bytes: an NHWC input of several channels and pixels differs.
  EXPECT_THROW(make(layers::LinearSpec{4, true}, {planes}, Layout::Nchw, Layout::Nhwc),
               runtime::InvalidArgument);
  EXPECT_THROW(make(layers::SoftmaxCrossEntropySpec{}, {planes}, Layout::Nchw, Layout::Nhwc),
               runtime::InvalidArgument);
  // Element-wise layers, concatenation and pooling keep their input's layout.
  EXPECT_THROW(make(layers::ReluSpec{}, {planes}, Layout::Nhwc, Layout::Nchw),
               runtime::InvalidArgument);
  EXPECT_THROW(make(layers::AddSpec{}, {planes, planes}, Layout::Nchw, Layout::Nhwc),
               runtime::InvalidArgument);
  EXPECT_THROW(make(dropout(0.5), {planes}, Layout::Nhwc, Layout::Nchw), runtime::InvalidArgument);
  EXPECT_THROW(make(layers::ConcatSpec{}, {planes, planes}, Layout::Nhwc, Layout::Nchw),
               runtime::InvalidArgument);
  EXPECT_THROW(make(max_pool({2, 2}, {2, 2}, {0, 0}), {planes}, Layout::Nchw, Layout::Nhwc),
               runtime::InvalidArgument);
  EXPECT_THROW(make(avg_pool({2, 2}, {2, 2}, {0, 0}, true), {planes}, Layout::Nhwc, Layout::Nchw),
               runtime::InvalidArgument);
  EXPECT_THROW(make(layers::GlobalAvgPoolSpec{}, {planes}, Layout::Nchw, Layout::Nhwc),
               runtime::InvalidArgument);
  // The same bytes in both layouts: taken.
  EXPECT_NO_THROW(
      make(layers::LinearSpec{4, true}, {Shape{2, 3, 1, 1}}, Layout::Nchw, Layout::Nhwc));
  EXPECT_NO_THROW(make(layers::FlattenSpec{}, {planes}, Layout::Nchw, Layout::Nhwc));
}

}  // namespace
}  // namespace vdnn::test
