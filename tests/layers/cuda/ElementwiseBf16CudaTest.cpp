// The CUDA ReLU, smooth activations, Mul, Add, Dropout, Flatten, Concat, LayerNorm2d, LayerScale
// and StochasticDepth layers in BF16 against their CPU layers in F32 on the same bf16-rounded
// inputs, in NCHW and NHWC, overwriting and accumulating input gradients. Tolerances (relative to
// the largest |cpu| of each tensor, see cuda_matches_cpu):
// - silu, gelu, hardswish, relu6, hardsigmoid: the device's float result may differ from the
//   CPU's by a few ulps, so one bf16 rounding (two when accumulating).
// - sigmoid: as those forward; its backward reads its saved output, which bf16 rounded (as
//   PyTorch's does): dy * y * (1 - y) moves by up to |dy| * y * |1 - 2y| * 2^-9 <= |dy| * 2^-9,
//   while the largest |dx| is about |dy| / 4, so two roundings more than the others.
// - relu, dropout with 1 / (1 - p) a power of two, flatten, concat: exact when overwriting (a
//   selection, copy or exact product of bf16 values, stored once); one bf16 rounding when
//   accumulating (old + new in float, rounded once).
// - add: the sum of the first two inputs rounds once and each further input once more, so
//   (inputs - 1) roundings of partial sums (one more allowed, as a partial sum may exceed the
//   largest final one); its backward copies, with one rounding when accumulating.
// - dropout with p = 0.3: the product rounds once (and once more when accumulating). The mask
//   itself is the CPU's bit for bit: a dropped element is 0 on both backends, which a wrong mask
//   would break by far more than the tolerance.
// - layernorm2d, layer_scale, stochastic_depth: FP32 statistics, sums and products of bf16
//   values, each stored value rounded once (twice when accumulating).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "runtime/Error.hpp"
#include "tests/layers/cuda/Bf16LayerCases.hpp"

namespace vdnn::test {
namespace {

using runtime::Shape;

class ElementwiseBf16Cuda : public Bf16LayerCuda {};

layers::DropoutSpec dropout(double p) {
  layers::DropoutSpec spec;
  spec.p = p;
  return spec;
}

// Odd extents, channel counts that are and are not multiples of 4 (the vectorized passes), a 1 x 1
// plane, one channel, rank 2.
const std::vector<Shape>& element_shapes() {
  static const std::vector<Shape> table = {
      Shape{1, 1, 1, 7},  Shape{2, 3, 4, 5}, Shape{3, 5, 1, 1},   Shape{2, 6, 7, 9},
      Shape{4, 16, 7, 7}, Shape{3, 10},      Shape{2, 64, 14, 14}};
  return table;
}

TEST_F(ElementwiseBf16Cuda, ElementwiseLayersMatchCpuInBothLayouts) {
  std::vector<Bf16Case> cases;
  for (const Shape& s : element_shapes()) {
    const std::string shape = s.to_string();
    cases.push_back({"relu " + shape, layers::ReluSpec{}, {s}, kBf16Exact, kBf16Rounding});
    for (const layers::LayerSpec& activation :
         {layers::LayerSpec{layers::SiluSpec{}}, layers::LayerSpec{layers::GeluSpec{}},
          layers::LayerSpec{layers::SigmoidSpec{}}, layers::LayerSpec{layers::HardswishSpec{}},
          layers::LayerSpec{layers::Relu6Spec{}}, layers::LayerSpec{layers::HardsigmoidSpec{}}}) {
      const std::string name = std::string(layers::type_name(activation)) + " " + shape;
      const bool from_output = std::holds_alternative<layers::SigmoidSpec>(activation);
      const double tolerance = (from_output ? 3 : 1) * kBf16Rounding;
      cases.push_back({name, activation, {s}, tolerance, tolerance + kBf16Rounding});
    }
    for (const std::size_t inputs : {2, 3, 4}) {
      // inputs - 1 roundings of partial sums, which may exceed the final sums: one more of margin.
      const double add_tolerance = static_cast<double>(inputs) * kBf16Rounding;
      cases.push_back({"add" + std::to_string(inputs) + " " + shape, layers::AddSpec{},
                       std::vector<Shape>(inputs, s), add_tolerance, add_tolerance});
    }
    // mul: one product rounded once; the broadcast scale's gradient a float sum rounded once.
    if (s.rank() == 4) {
      cases.push_back(
          {"mul " + shape, layers::MulSpec{}, {s, s}, kBf16Rounding, 2 * kBf16Rounding});
      const std::vector<Shape> inputs = {s, Shape{s.n(), s.c(), 1, 1}};
      cases.push_back(
          {"mul broadcast " + shape, layers::MulSpec{}, inputs, kBf16Rounding, 2 * kBf16Rounding});
    }
    cases.push_back({"dropout0.5 " + shape, dropout(0.5), {s}, kBf16Exact, kBf16Rounding});
    cases.push_back({"dropout0.3 " + shape, dropout(0.3), {s}, kBf16Rounding, 2 * kBf16Rounding});
    cases.push_back({"flatten " + shape, layers::FlattenSpec{}, {s}, kBf16Exact, kBf16Rounding});
  }
  expect_cases_match(cases);
}

TEST_F(ElementwiseBf16Cuda, ConcatMatchesCpuInBothLayouts) {
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
  std::vector<Bf16Case> cases;
  for (const Rows& r : rows) {
    Bf16Case c{"concat", layers::ConcatSpec{}, {}, kBf16Exact, kBf16Rounding};
    for (const std::int64_t channels : r.channels) {
      c.inputs.push_back(Shape{r.n, channels, r.h, r.w});
      c.name += " " + c.inputs.back().to_string();
    }
    cases.push_back(c);
  }
  expect_cases_match(cases);
}

// ConvNeXt's layers: FP32 statistics and sums from bf16 values, each stored value rounded once;
// stochastic depth's mask is the CPU's bit for bit.
TEST_F(ElementwiseBf16Cuda, ConvNextLayersMatchCpuInBothLayouts) {
  layers::LayerNorm2dSpec norm;
  norm.eps = 1e-6;
  layers::StochasticDepthSpec drop_path;
  drop_path.p = 0.25;
  std::vector<Bf16Case> cases;
  for (const Shape& s :
       {Shape{2, 3, 4, 5}, Shape{3, 5, 1, 1}, Shape{2, 40, 7, 9}, Shape{2, 96, 7, 7}}) {
    const std::string shape = s.to_string();
    cases.push_back({"layernorm2d " + shape, norm, {s}, kBf16Rounding, 2 * kBf16Rounding});
    cases.push_back(
        {"layer_scale " + shape, layers::LayerScaleSpec{}, {s}, kBf16Rounding, 2 * kBf16Rounding});
    cases.push_back(
        {"stochastic_depth " + shape, drop_path, {s}, kBf16Rounding, 2 * kBf16Rounding});
  }
  expect_cases_match(cases);
}

// The layers of this family take BF16; the CUDA backend still refuses F64.
TEST_F(ElementwiseBf16Cuda, ConstructorsTakeBf16AndRefuseF64) {
  const Shape s{2, 3, 4, 5};
  for (const layers::LayerSpec& spec :
       std::vector<layers::LayerSpec>{layers::ReluSpec{}, layers::FlattenSpec{}, dropout(0.5)}) {
    EXPECT_NO_THROW(make_bf16(spec, {s}, runtime::Layout::Nchw, runtime::Layout::Nchw));
    layers::LayerOptions o = options();
    o.dtype = runtime::DType::F64;
    EXPECT_THROW(layers::make_layer(layers::Backend::Cuda, spec, {s}, o), runtime::InvalidArgument);
  }
}

}  // namespace
}  // namespace vdnn::test
