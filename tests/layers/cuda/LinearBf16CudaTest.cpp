// LinearCuda in BF16 (Note [Precision]) against LinearCpu run in F32 on the same bf16-rounded data:
// bias and no bias, flattened rank-4 inputs in both layouts, accumulated and skipped input
// gradients, bitwise repeatability, the workspace of the bf16 weight copy, and FP32 accumulation
// whatever math mode another user left on the shared cuBLAS handle.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/LinearCuda.hpp"
#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {
namespace {

using layers::LayerOptions;
using layers::LinearSpec;
using runtime::DType;
using runtime::Layout;
using runtime::Shape;
using LinearBf16Cuda = CudaLayerTest;

// The bf16 weight copy and the stored y and dx round once each (relative 2^-8) after FP32
// accumulation; dW is written in F32 from bf16 operands. Within 2 % of a tensor's largest element
// over the sums below.
constexpr double kBf16Tolerance = 2e-2;

LayerOptions bf16(LayerOptions o, Layout input_layout = Layout::Nchw) {
  o.dtype = DType::BF16;
  o.deterministic = true;
  o.input_layout = input_layout;
  o.layout = input_layout;
  return o;
}

struct LinearCase {
  std::string name;
  Shape input;
  LinearSpec spec;
  bool accumulate = false;
  Layout input_layout = Layout::Nchw;
};

TEST_F(LinearBf16Cuda, MatchesCpuOverShapeTable) {
  const std::vector<LinearCase> cases = {
      {"bias", Shape{4, 10}, LinearSpec{7, true}},
      {"bias_out_multiple_of_4", Shape{6, 24}, LinearSpec{16, true}},
      {"flattened_nchw_no_bias", Shape{3, 2, 4, 5}, LinearSpec{16, false}},
      {"batch1_bias", Shape{1, 33}, LinearSpec{5, true}},
      {"wide_512_to_1000_bias", Shape{32, 512}, LinearSpec{1000, true}},
      {"after_global_pool_nhwc_bias", Shape{8, 64, 1, 1}, LinearSpec{10, true}, false,
       Layout::Nhwc},
      {"accumulate_bias", Shape{5, 12}, LinearSpec{9, true}, true},
      {"accumulate_flattened_no_bias", Shape{2, 3, 3, 3}, LinearSpec{4, false}, true},
  };
  for (const LinearCase& c : cases) {
    SCOPED_TRACE(c.name);
    layers::cuda::LinearCuda layer(c.spec, {c.input}, bf16(options(), c.input_layout));
    ASSERT_EQ(layer.dtype(), DType::BF16);
    StepSettings settings;
    settings.norm_tolerance = kBf16NormTolerance;
    settings.accumulate = c.accumulate;
    settings.bitwise_repeatable = true;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kBf16Tolerance, settings));
  }
}

TEST_F(LinearBf16Cuda, EmptyInputGradientTargetStillGivesParameterGradients) {
  layers::cuda::LinearCuda layer(LinearSpec{6, true}, {Shape{4, 3, 2, 2}}, bf16(options()));
  StepSettings settings;
  settings.norm_tolerance = kBf16NormTolerance;
  settings.input_grads = false;
  EXPECT_TRUE(cuda_matches_cpu(context(), layer, kBf16Tolerance, settings));
}

// The passes that read the weight stage its bf16 copy in their workspace; backward also the bias
// sums' scratch. F32 needs none.
TEST_F(LinearBf16Cuda, WorkspaceHoldsTheBf16WeightCopy) {
  const Shape input{32, 512};
  const std::size_t weight = runtime::MemoryResource::align_up(Shape{1000, 512}.bytes(DType::BF16));
  layers::cuda::LinearCuda with_bias(LinearSpec{1000, true}, {input}, bf16(options()));
  EXPECT_EQ(with_bias.workspace().forward, weight);
  EXPECT_GT(with_bias.workspace().backward, weight);
  layers::cuda::LinearCuda without_bias(LinearSpec{1000, false}, {input}, bf16(options()));
  EXPECT_EQ(without_bias.workspace(), (layers::WorkspaceBytes{weight, weight}));
  layers::cuda::LinearCuda f32(LinearSpec{1000, true}, {input}, options());
  EXPECT_EQ(f32.workspace(), layers::WorkspaceBytes{});
}

// A math mode another user left on the shared handle does not change the bf16 GEMMs' FP32
// accumulation (CUBLAS_COMPUTE_32F is asked for explicitly).
TEST_F(LinearBf16Cuda, MatchesWhenTheSharedHandleWasLeftInTf32Mode) {
  layers::cuda::LinearCuda layer(LinearSpec{1000, true}, {Shape{32, 512}}, bf16(options()));
  VDNN_CHECK_CUBLAS(cublasSetMathMode(context().cublas(), CUBLAS_TF32_TENSOR_OP_MATH));
  EXPECT_TRUE(cuda_matches_cpu(context(), layer, kBf16Tolerance));
}

// Needs no device: the options are checked before any CUDA call.
TEST(LinearBf16CudaOptions, Bf16WithoutContextIsRefused) {
  LayerOptions o;
  o.dtype = DType::BF16;
  EXPECT_THROW(layers::cuda::LinearCuda(LinearSpec{3, true}, {Shape{2, 5}}, o),
               runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
