// DepthwiseConv2dCuda: the channels-last depthwise convolution (one filter per channel:
// MobileNet's, EfficientNet's and ConvNeXt's) on our own kernels, where cuDNN is slow (Note
// [Depthwise convolution]); every other convolution stays Conv2dCuda's.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// A depthwise conv2d (groups == in_channels == out_channels) of a square 3x3, 5x5 or 7x7 kernel,
/// any stride, padding and dilation, optional bias, NHWC in and out, F32 or BF16 feature maps.
/// Weight [C, 1, kh, kw] and bias [C] F32 (or, in BF16 with LayerOptions::bf16_weight_copies, the
/// weight as its bf16 copy); in NHWC the weight's KRSC and KCRS orders are the same memory.
///
/// At stride 1 (dilation 1) the output, and the input gradient as a convolution of dy with the
/// kernel turned by 180 degrees, run a thread per 4 outputs of a row and 4 channels (1 where C is
/// not a multiple of 4) with the row's window in registers; other strides and dilations a thread
/// per pixel. Taps are summed in a fixed order in float; BF16 reads the weight rounded to bf16, as
/// cuDNN's bf16 convolution does, and rounds each stored element once. The weight and bias
/// gradients are sums over N, OH and OW, first per thread in float, then over a block's columns and
/// the batch's parts in double, in an order the shapes fix: every pass is bitwise reproducible
/// (deterministic runs included), and no pass uses atomics.
///
/// Workspace: forward, the weight transposed to [kh * kw, C] floats; backward, that and the
/// gradient sums' partials. Backward reads the input and the output gradient; it writes or (per
/// GradTarget::accumulate) adds the input gradient unless its view is empty, and overwrites the
/// weight and bias gradients. All work is enqueued on options.cuda's compute stream; nothing
/// allocates or synchronizes. The constructor throws runtime::InvalidArgument unless handles()
/// holds; forward and backward throw it for views that do not match the layer.
class DepthwiseConv2dCuda final : public Layer {
 public:
  /// Whether this layer runs `spec` on input `input` under `options`: a depthwise convolution as
  /// above, NHWC in and out, F32 or BF16, with a CUDA context.
  static bool handles(const Conv2dSpec& spec, const Shape& input, const LayerOptions& options);
  /// Whether the registry builds this layer rather than Conv2dCuda: where handles() holds and our
  /// kernels measured faster than cuDNN's in both passes (tools/bench/DepthwiseBench.cpp; Note
  /// [Depthwise convolution]): F32 7x7 kernels.
  static bool preferred(const Conv2dSpec& spec, const Shape& input, const LayerOptions& options);

  DepthwiseConv2dCuda(const Conv2dSpec& spec, std::vector<Shape> input_shapes,
                      const LayerOptions& options);
  WorkspaceBytes workspace() const override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  // Byte offset of the gradient partials in the backward workspace (after the transposed weight).
  std::size_t partials_offset() const;

  Conv2dSpec spec_;
  runtime::cuda::DeviceContext* context_;
  std::int64_t parts_;  // the batch's parts the weight gradient's first level sums apart
};

}  // namespace vdnn::layers::cuda
