// CudaLayerTest: the harness of the CUDA layer tests. A fixture that skips without a device and
// owns a DeviceContext, and cuda_matches_cpu(), which runs a CUDA layer and the CPU layer of the
// same spec on the same random data and compares every result.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "layers/Layer.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::test {

/// Skips the test when no CUDA device is visible; otherwise owns a context on device 0.
class CudaLayerTest : public ::testing::Test {
 protected:
  void SetUp() override;

  runtime::cuda::DeviceContext& context() { return *context_; }
  /// Options for the CUDA layer under test: F32 on this context, deterministic algorithms, and TF32
  /// only when asked.
  layers::LayerOptions options(bool allow_tf32 = false);
  /// options() with bf16 feature maps (Note [Precision]).
  layers::LayerOptions bf16_options();

 private:
  std::unique_ptr<runtime::cuda::DeviceContext> context_;
};

/// The norm-wise bound of the bf16 layer tests (StepSettings::norm_tolerance): the error of the
/// whole tensor within a few bf16 roundings (2^-8 relative each) of its 2-norm.
inline constexpr double kBf16NormTolerance = 1e-2;

/// How one comparison step runs.
struct StepSettings {
  bool accumulate = false;       // input gradients start from random contents and are added to
  bool input_grads = true;       // false: backward gets empty input-gradient targets
  bool training = true;          // ForwardArgs::training
  std::uint64_t step = 0;        // ForwardArgs::step and BackwardArgs::step
  std::uint64_t seed = 1;        // the random data: inputs, parameters, labels, output gradient
  std::uint64_t layer_seed = 0;  // LayerOptions::seed the CUDA layer was built with
  double label_smoothing = 0.0;  // LayerOptions::label_smoothing the CUDA layer was built with
  int input_levels = 0;  // > 0: inputs take only this many distinct values (ties, as after ReLU)
  /// BF16 layers: trainable parameters rounded to bf16 values too, so that the layer's bf16 weight
  /// copy is exact and the CPU reference computes with the very weights the layer does. Needed
  /// where a discontinuity (a fused ReLU's mask) follows the weights: otherwise the weight rounding
  /// (2^-8 relative) moves outputs near 0 across it, and their whole gradient differs.
  bool bf16_params = false;
  /// Also run the CUDA step a second time and require bitwise the same results (deterministic
  /// algorithms and kernels).
  bool bitwise_repeatable = true;
  /// > 0: also require ||cuda - cpu|| <= norm_tolerance * ||cpu|| (2-norms) per tensor, the
  /// norm-wise bound of the bf16 tests.
  double norm_tolerance = 0.0;
};

/// The values of an NCHW-ordered rank-4 tensor of `shape` in `layout`'s memory order, and back.
/// Other ranks, and Layout::Nchw, are returned unchanged.
std::vector<float> to_layout(const std::vector<float>& nchw, const runtime::Shape& shape,
                             runtime::Layout layout);
std::vector<float> from_layout(const std::vector<float>& stored, const runtime::Shape& shape,
                               runtime::Layout layout);

/// Runs one forward and one backward step of `layer` (a CUDA layer on `context`) and of the CPU
/// layer built through the registry from the same spec, input shapes and layer seed, in F32, on the
/// same random inputs (for a BF16 layer: its feature maps, output gradient and accumulated input
/// gradients are stored in bf16 on the device, and the F32 CPU reference reads the same
/// bf16-rounded values; parameters are F32 in both) (uniform in [-1, 1]), parameters (trainable in
/// [-1, 1], buffers in [0.5, 1.5]), output gradient and, for loss layers, labels (host memory, as
/// the executor passes them). The CUDA layer's rank-4 inputs are stored in its input_layout() and
/// its output and output gradient in its layout(), converted on upload and download, so both
/// layouts compare with the NCHW CPU layer. The CUDA backward gets only the views
/// layers::backward_needs() declares; its outputs, gradients and workspace start as NaN, so an
/// element left unwritten fails. Compares the output, every parameter and buffer after the step,
/// the loss statistics, every input gradient and every parameter gradient: |cuda - cpu| <=
/// tolerance * max(|cpu| over the tensor, 1e-3). The failure names the tensor and its worst
/// element. Synchronizes the context's compute stream.
::testing::AssertionResult cuda_matches_cpu(runtime::cuda::DeviceContext& context,
                                            layers::Layer& layer, double tolerance,
                                            const StepSettings& settings = {});

}  // namespace vdnn::test
