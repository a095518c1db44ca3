// Conv2dCuda and LinearCuda against Conv2dCpu and LinearCpu over tables of shapes: forward output,
// input, weight and bias gradients (overwrite, accumulate and skipped), lean algorithms and TF32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/cuda/Conv2dCuda.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/LinearCuda.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {
namespace {

using layers::Conv2dSpec;
using layers::LayerOptions;
using layers::LinearSpec;
using runtime::DType;
using runtime::Shape;
// The fixtures carry the suite names; the layers are spelled out in full.
using ConvCuda = CudaLayerTest;
using LinearCuda = CudaLayerTest;

// FP32 against Eigen's FP32: only summation order differs (and the transforms of Winograd or FFT
// algorithms, which cuDNN may pick).
constexpr double kConvTolerance = 1e-4;
// TF32 rounds every product's operands to 10 mantissa bits.
constexpr double kTf32Tolerance = 1e-2;
constexpr double kLinearTolerance = 1e-5;
// Random data has full 24-bit mantissas: TF32 rounding shows as relative errors near 1e-4 on the
// shapes below, FP32 summation-order differences stay near 1e-6.
constexpr double kTf32Detector = 2e-5;

std::vector<ConvCase> conv_cases() {
  return {
      {"3x3_pad1_bias", Shape{2, 3, 7, 7}, conv(4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)},
      {"3x3_stride2_pad1", Shape{1, 4, 9, 8}, conv(5, {3, 3}, {2, 2}, {1, 1})},
      {"3x3_dilation2_bias", Shape{2, 3, 10, 9}, conv(2, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 1, true)},
      {"groups2_bias", Shape{2, 4, 6, 6}, conv(6, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, true)},
      {"depthwise", Shape{2, 5, 7, 7}, conv(5, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 5)},
      {"depthwise_x2_stride2_bias", Shape{1, 3, 8, 8},
       conv(6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 3, true)},
      // ConvNeXt's 7x7 and MobileNet's strided 3x3 depthwise convolutions.
      {"depthwise_7x7_pad3_bias_convnext", Shape{2, 96, 14, 14},
       conv(96, {7, 7}, {1, 1}, {3, 3}, {1, 1}, 96, true)},
      {"depthwise_3x3_stride2_mobilenet", Shape{2, 32, 15, 15},
       conv(32, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 32)},
      {"kernel_1x3_stride_1x2", Shape{2, 3, 5, 9}, conv(4, {1, 3}, {1, 2}, {0, 1})},
      {"kernel_5x2_bias", Shape{1, 2, 9, 6}, conv(3, {5, 2}, {2, 1}, {2, 1}, {1, 1}, 1, true)},
      {"1x1_bias", Shape{3, 8, 5, 4}, conv(6, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true)},
      {"1x1_stride2", Shape{2, 4, 7, 7}, conv(3, {1, 1}, {2, 2})},
      {"7x7_stride2_pad3_stem", Shape{2, 3, 32, 32}, conv(16, {7, 7}, {2, 2}, {3, 3})},
      {"3x3_32_to_64_bias", Shape{4, 32, 14, 14},
       conv(64, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)},
      {"1x1_64_to_128_bottleneck", Shape{8, 64, 7, 7}, conv(128, {1, 1})},
      {"groups_dilation_stride_mixed", Shape{2, 6, 11, 10},
       conv(4, {3, 2}, {2, 3}, {2, 1}, {2, 3}, 2, true)},
      {"accumulate_3x3_stride2", Shape{2, 3, 8, 7}, conv(4, {3, 3}, {2, 2}, {1, 1}), true},
      {"accumulate_1x1_groups_bias", Shape{2, 4, 3, 5},
       conv(6, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 2, true), true},
  };
}

TEST_F(ConvCuda, MatchesCpuOverShapeTable) {
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(c.name);
    layers::cuda::Conv2dCuda layer(c.spec, {c.input}, options());
    StepSettings settings;
    settings.accumulate = c.accumulate;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kConvTolerance, settings));
  }
}

// Note [Layout]: NHWC maps with the weight converted to KRSC in the workspace, and back for its
// gradient; FP32 and TF32.
TEST_F(ConvCuda, ChannelsLastMatchesCpuOverShapeTable) {
  for (const bool tf32 : {false, true}) {
    for (const ConvCase& c : conv_cases()) {
      SCOPED_TRACE(c.name + (tf32 ? " tf32" : " fp32"));
      LayerOptions o = options(tf32);
      o.layout = o.input_layout = runtime::Layout::Nhwc;
      layers::cuda::Conv2dCuda layer(c.spec, {c.input}, o);
      ASSERT_EQ(layer.layout(), runtime::Layout::Nhwc);
      StepSettings settings;
      settings.accumulate = c.accumulate;
      EXPECT_TRUE(
          cuda_matches_cpu(context(), layer, tf32 ? kTf32Tolerance : kConvTolerance, settings));
    }
  }
}

// The stem: an NCHW network input, converted in the workspace, to an NHWC output; the input takes
// no gradient, and asking for one is refused.
TEST_F(ConvCuda, NchwInputToChannelsLastOutputMatchesCpu) {
  LayerOptions o = options();
  o.layout = runtime::Layout::Nhwc;
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(c.name);
    layers::cuda::Conv2dCuda layer(c.spec, {c.input}, o);
    ASSERT_EQ(layer.input_layout(), runtime::Layout::Nchw);
    EXPECT_GT(layer.workspace().forward, c.input.bytes(DType::F32));
    StepSettings settings;
    settings.input_grads = false;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kConvTolerance, settings));
  }
  layers::cuda::Conv2dCuda layer(conv(4, {3, 3}, {1, 1}, {1, 1}), {Shape{2, 3, 6, 6}}, o);
  EXPECT_THROW(static_cast<void>(cuda_matches_cpu(context(), layer, kConvTolerance)),
               runtime::InvalidArgument);
}

TEST_F(ConvCuda, EmptyInputGradientTargetStillGivesParameterGradients) {
  layers::cuda::Conv2dCuda layer(conv(8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true),
                                 {Shape{2, 4, 9, 9}}, options());
  StepSettings settings;
  settings.input_grads = false;
  EXPECT_TRUE(cuda_matches_cpu(context(), layer, kConvTolerance, settings));
}

// A workspace limit small enough to rule the fastest algorithms out.
constexpr std::size_t kLeanWorkspaceBytes = std::size_t{8} << 20;
constexpr layers::WorkspaceBytes kLean{kLeanWorkspaceBytes, kLeanWorkspaceBytes};
constexpr layers::WorkspaceBytes kNoLimit{layers::kUnlimitedWorkspace, layers::kUnlimitedWorkspace};

// A layer large enough that the fastest algorithms want more than the lean bound, measured
// (nondeterministic) and heuristic (deterministic).
TEST_F(ConvCuda, LeanAlgorithmsStayWithinBoundAndStillMatch) {
  const Conv2dSpec spec = conv(64, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true);
  const Shape input{16, 64, 56, 56};
  for (const bool deterministic : {true, false}) {
    SCOPED_TRACE(deterministic ? "deterministic" : "measured");
    LayerOptions o = options();
    o.deterministic = deterministic;
    layers::cuda::Conv2dCuda layer(spec, {input}, o);
    const std::size_t fastest = layer.workspace_bytes();
    layer.limit_workspace(kLean);
    const std::size_t lean = layer.workspace_bytes();
    std::cout << "[          ] workspace bytes: fastest " << fastest << ", lean " << lean << "\n";
    EXPECT_LE(lean, kLeanWorkspaceBytes);
    StepSettings settings;
    settings.bitwise_repeatable = deterministic;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kConvTolerance, settings));
    layer.limit_workspace(kNoLimit);
    EXPECT_EQ(layer.workspace_bytes(), fastest);
    // The choices a limit makes, smallest workspace first, the fastest last; timed by cudnnFind
    // only when measured.
    for (const bool backward : {false, true}) {
      const std::vector<layers::WorkspaceOption> choices = layer.workspace_options(backward);
      ASSERT_FALSE(choices.empty());
      EXPECT_EQ(choices.back().workspace,
                backward ? layer.workspace().backward : layer.workspace().forward);
      for (std::size_t i = 0; i < choices.size(); ++i) {
        if (i > 0) {
          EXPECT_LT(choices[i - 1].workspace, choices[i].workspace);
        }
        EXPECT_EQ(choices[i].seconds > 0.0, !deterministic);
      }
    }
  }
}

// Note [Batch chunks]: a backward limit just below the fastest algorithms' workspace runs the
// best-ranked algorithm over batch chunks (the heuristic ranking puts it, chunked, before the
// next-ranked one whole), and the chunks' gradients are the whole batch's.
TEST_F(ConvCuda, BatchChunksFitTighterLimitsAndStillMatch) {
  const Conv2dSpec spec = conv(64, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true);
  LayerOptions o = options();
  o.deterministic = true;
  layers::cuda::Conv2dCuda layer(spec, {Shape{32, 64, 56, 56}}, o);
  const layers::WorkspaceBytes fastest = layer.workspace();
  std::cout << "[          ] fastest workspace bytes: forward " << fastest.forward << ", backward "
            << fastest.backward << "\n";
  ASSERT_GT(fastest.backward, std::size_t{16} << 20) << "too small a problem to be chunked";
  layer.limit_workspace({layers::kUnlimitedWorkspace, fastest.backward - 1});
  const layers::cuda::Conv2dCuda::PassChunks chunks = layer.chunks();
  std::cout << "[          ] chunks: forward " << chunks.forward << ", data "
            << chunks.backward_data << ", filter " << chunks.backward_filter << "\n";
  EXPECT_EQ(chunks.forward, 1);
  EXPECT_GT(std::max(chunks.backward_data, chunks.backward_filter), 1);
  EXPECT_LT(layer.workspace().backward, fastest.backward);
  EXPECT_NE(layer.algorithms().find(" chunks ("), std::string::npos) << layer.algorithms();
  for (const bool accumulate : {false, true}) {
    SCOPED_TRACE(accumulate ? "accumulate" : "overwrite");
    StepSettings settings;
    settings.accumulate = accumulate;
    settings.bitwise_repeatable = true;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kConvTolerance, settings));
  }
  layer.limit_workspace(kNoLimit);
  const layers::cuda::Conv2dCuda::PassChunks whole = layer.chunks();
  EXPECT_EQ(std::max(whole.backward_data, whole.backward_filter), 1);
  EXPECT_EQ(layer.workspace(), fastest);
  EXPECT_EQ(layer.algorithms().find(" chunks ("), std::string::npos) << layer.algorithms();
}

TEST_F(ConvCuda, LeanAlgorithmsMatchOverShapeTable) {
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(c.name);
    layers::cuda::Conv2dCuda layer(c.spec, {c.input}, options());
    layer.limit_workspace(kLean);
    EXPECT_LE(layer.workspace_bytes(), kLeanWorkspaceBytes);
    StepSettings settings;
    settings.accumulate = c.accumulate;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kConvTolerance, settings));
  }
}

TEST_F(ConvCuda, Tf32MatchesWithinLooserTolerance) {
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(c.name);
    LayerOptions o = options(/*allow_tf32=*/true);
    o.deterministic = false;
    layers::cuda::Conv2dCuda layer(c.spec, {c.input}, o);
    StepSettings settings;
    settings.accumulate = c.accumulate;
    settings.bitwise_repeatable = false;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kTf32Tolerance, settings));
  }
}

// The bound separates the two maths (the TF32 run exceeds it), so FP32 staying within it shows that
// allow_tf32 = false really keeps tensor-core TF32 out.
TEST_F(ConvCuda, WithoutTf32ErrorsStayBelowTf32Rounding) {
  const Conv2dSpec spec = conv(64, {1, 1});
  const Shape input{8, 64, 28, 28};
  for (const runtime::Layout layout : {runtime::Layout::Nchw, runtime::Layout::Nhwc}) {
    SCOPED_TRACE(runtime::layout_name(layout));
    LayerOptions fp32_options = options();
    fp32_options.layout = fp32_options.input_layout = layout;
    layers::cuda::Conv2dCuda fp32(spec, {input}, fp32_options);
    EXPECT_TRUE(cuda_matches_cpu(context(), fp32, kTf32Detector));
    LayerOptions tf32_options = options(/*allow_tf32=*/true);
    tf32_options.layout = tf32_options.input_layout = layout;
    layers::cuda::Conv2dCuda tf32(spec, {input}, tf32_options);
    EXPECT_FALSE(cuda_matches_cpu(context(), tf32, kTf32Detector));
  }
}

// Need no device: the options are refused before any CUDA call.
TEST(ConvCudaOptions, RejectsF64AndMissingContext) {
  LayerOptions f64;
  f64.dtype = DType::F64;
  const Conv2dSpec spec = conv(4, {3, 3});
  EXPECT_THROW(layers::cuda::Conv2dCuda(spec, {Shape{1, 2, 5, 5}}, f64), runtime::InvalidArgument);
  EXPECT_THROW(layers::cuda::Conv2dCuda(spec, {Shape{1, 2, 5, 5}}, LayerOptions{}),
               runtime::InvalidArgument);
}

TEST(LinearCudaOptions, RejectsF64AndMissingContext) {
  LayerOptions f64;
  f64.dtype = DType::F64;
  const LinearSpec spec{3, true};
  EXPECT_THROW(layers::cuda::LinearCuda(spec, {Shape{2, 5}}, f64), runtime::InvalidArgument);
  EXPECT_THROW(layers::cuda::LinearCuda(spec, {Shape{2, 5}}, LayerOptions{}),
               runtime::InvalidArgument);
}

struct LinearCase {
  std::string name;
  Shape input;
  LinearSpec spec;
  bool accumulate = false;
};

TEST_F(LinearCuda, MatchesCpuOverShapeTable) {
  const std::vector<LinearCase> cases = {
      {"bias", Shape{4, 10}, LinearSpec{7, true}},
      {"flattened_nchw_no_bias", Shape{3, 2, 4, 5}, LinearSpec{16, false}},
      {"batch1_bias", Shape{1, 33}, LinearSpec{5, true}},
      {"wide_512_to_1000_bias", Shape{32, 512}, LinearSpec{1000, true}},
      {"accumulate_bias", Shape{5, 12}, LinearSpec{9, true}, true},
      {"accumulate_flattened_no_bias", Shape{2, 3, 3, 3}, LinearSpec{4, false}, true},
  };
  for (const LinearCase& c : cases) {
    SCOPED_TRACE(c.name);
    layers::cuda::LinearCuda layer(c.spec, {c.input}, options());
    StepSettings settings;
    settings.accumulate = c.accumulate;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kLinearTolerance, settings));
  }
}

TEST_F(LinearCuda, EmptyInputGradientTargetStillGivesParameterGradients) {
  layers::cuda::LinearCuda layer(LinearSpec{6, true}, {Shape{4, 3, 2, 2}}, options());
  StepSettings settings;
  settings.input_grads = false;
  EXPECT_TRUE(cuda_matches_cpu(context(), layer, kLinearTolerance, settings));
}

// The cuBLAS handle is shared: a mode another user left on it must not leak into LinearCuda.
TEST_F(LinearCuda, StaysFp32WhenTheSharedHandleWasLeftInTf32Mode) {
  layers::cuda::LinearCuda layer(LinearSpec{1000, true}, {Shape{32, 512}}, options());
  VDNN_CHECK_CUBLAS(cublasSetMathMode(context().cublas(), CUBLAS_TF32_TENSOR_OP_MATH));
  EXPECT_TRUE(cuda_matches_cpu(context(), layer, kTf32Detector));
}

}  // namespace
}  // namespace vdnn::test
