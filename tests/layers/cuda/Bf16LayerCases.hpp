// Bf16LayerCases: the fixture of the BF16 CUDA layer tests. Each case is a CUDA layer built through
// make_layer with LayerOptions::dtype BF16, run in an NCHW and an NHWC network, overwriting and
// accumulating input gradients, and compared by cuda_matches_cpu with the CPU layer in F32 on the
// same bf16-rounded inputs (Note [Precision]).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layers/Registry.hpp"
#include "layers/cuda/CudaLayerTest.hpp"

namespace vdnn::test {

/// One bf16 rounding of a stored value: half a unit in the last of bf16's 8 significant bits,
/// u = 2^-8 relative (in [1, 2) the bf16 values are 2^-7 apart; a tie such as 1 + 2^-8 rounds by
/// 2^-8, which 2^-9 would not cover).
inline constexpr double kBf16Rounding = 1.0 / 256.0;
/// Exact: selections, copies and products by powers of two of bf16 values are bf16 values, so the
/// one rounding of the CUDA store leaves the CPU's float result unchanged.
inline constexpr double kBf16Exact = 0.0;

/// One row of a table: a layer and its inputs (NCHW-logical), compared within `tolerance` when
/// overwriting and `accumulate_tolerance` when adding to the input gradients (whose bf16 starting
/// values the CUDA layer reads, adds to in float and rounds once more).
struct Bf16Case {
  std::string name;
  layers::LayerSpec spec;
  std::vector<runtime::Shape> inputs;
  double tolerance = kBf16Rounding;
  double accumulate_tolerance = 2 * kBf16Rounding;
  int input_levels = 0;  // > 0: inputs of this many values (ties, as after ReLU)
};

class Bf16LayerCuda : public CudaLayerTest {
 protected:
  static constexpr std::uint64_t kLayerSeed = 7;

  // make_layer's CUDA layer of `spec` in BF16 for (layout, input_layout).
  std::unique_ptr<layers::Layer> make_bf16(const layers::LayerSpec& spec,
                                           const std::vector<runtime::Shape>& inputs,
                                           runtime::Layout layout, runtime::Layout input_layout) {
    layers::LayerOptions o = options();
    o.dtype = runtime::DType::BF16;
    o.seed = kLayerSeed;
    o.layout = layout;
    o.input_layout = input_layout;
    return layers::make_layer(layers::Backend::Cuda, spec, inputs, o);
  }

  // Every case in an NCHW and an NHWC network (rank-2 tensors stay NCHW-logical), overwriting and
  // accumulating input gradients, and once more with an empty input-gradient target.
  void expect_cases_match(const std::vector<Bf16Case>& cases) {
    using runtime::Layout;
    for (const Bf16Case& c : cases) {
      const runtime::Shape output = layers::infer_output_shape(c.spec, c.inputs);
      for (const Layout network : {Layout::Nchw, Layout::Nhwc}) {
        const Layout layout = output.rank() == 4 ? network : Layout::Nchw;
        const Layout input_layout = c.inputs.front().rank() == 4 ? network : Layout::Nchw;
        for (const int mode : {0, 1, 2}) {  // overwrite, accumulate, no input gradients
          SCOPED_TRACE(c.name + " bf16 " + runtime::layout_name(input_layout) + " -> " +
                       runtime::layout_name(layout) +
                       (mode == 1   ? " accumulate"
                        : mode == 2 ? " no input grads"
                                    : ""));
          const auto layer = make_bf16(c.spec, c.inputs, layout, input_layout);
          ASSERT_EQ(layer->dtype(), runtime::DType::BF16);
          StepSettings settings;
          settings.norm_tolerance = kBf16NormTolerance;
          settings.accumulate = mode == 1;
          settings.input_grads = mode != 2;
          settings.input_levels = c.input_levels;
          settings.step = 3;
          settings.layer_seed = kLayerSeed;
          EXPECT_TRUE(cuda_matches_cpu(context(), *layer,
                                       mode == 1 ? c.accumulate_tolerance : c.tolerance, settings));
        }
      }
    }
  }
};

}  // namespace vdnn::test
