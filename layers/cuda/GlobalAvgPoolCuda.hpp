// GlobalAvgPoolCuda: the mean over H and W of every channel on the CUDA backend in NCHW or NHWC
// (own kernels), F32 or BF16 (summed in float).
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// Mean over H and W per channel: [N, C, H, W] -> [N, C, 1, 1]. Input and output are in
/// options.layout, NCHW or NHWC, when options.input_layout is the same (else NCHW, which
/// make_layer refuses). Every view is in device memory and all work is enqueued on
/// options.cuda->compute_stream(); no workspace. Each mean is reduced in a fixed order, the same
/// in both layouts, so results are deterministic and bitwise the same in NCHW and NHWC. Backward
/// reads only the output gradient and writes or accumulates the input gradient unless its view is
/// empty. Not thread-safe. Throws runtime::InvalidArgument for dtypes other than F32 and BF16, a
/// missing context or views that do not match the layer; runtime::ShapeError when N * C * H * W
/// exceeds an int; runtime::CudaError when a launch fails.
class GlobalAvgPoolCuda final : public Layer {
 public:
  GlobalAvgPoolCuda(const GlobalAvgPoolSpec& spec, std::vector<Shape> input_shapes,
                    const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  runtime::cuda::DeviceContext* context_;
  int planes_;      // N * C
  int channels_;    // C in NHWC; N * C in NCHW, whose samples fold into channels (PlaneLayout)
  int plane_size_;  // H * W
  int count_;       // N * C * H * W
};

}  // namespace vdnn::layers::cuda
