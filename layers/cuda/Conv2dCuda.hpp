// Conv2dCuda: 2-D convolution with stride, padding, dilation, groups and optional bias on the CUDA
// backend (cuDNN), F32 or BF16 (Note [Precision]); also the fused conv2d_relu (Note [Fusion]) with
// a ReLU epilogue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// 2-D convolution; weight [Cout, Cin / groups, kh, kw] and bias [Cout] as in PyTorch, every view
/// in device memory. All work is enqueued on options.cuda->compute_stream() through the context's
/// cuDNN handle; nothing is allocated or synchronized after construction.
///
/// Engines are chosen once, at construction, per direction (forward, data gradient, weight
/// gradient), each with its cuDNN execution plan finalized then (Note [Convolution plans]), so a
/// pass costs the host one plan run per batch chunk: with options.deterministic, cuDNN's heuristic
/// ranking restricted to deterministic engines (so every construction makes the same choice and
/// runs are bitwise reproducible); otherwise the fastest of the heuristics' first engines timed on
/// the device (which allocates and synchronizes, at construction only). Where the fastest engine's
/// workspace is large, the candidates also include each engine run over 2, 4, 8 or 16 equal batch
/// chunks (those that divide the batch), whose workspace is a chunk's (Note [Batch chunks]). Every
/// eligible candidate is kept in rank order; each pass runs the first whose workspace is within
/// the pass's limit_workspace() (or, when none is, the one needing least). Math: FP32 FMA engines
/// only unless options.allow_tf32, then TF32 tensor-core engines too.
///
/// BF16 (options.dtype, Note [Precision]): the feature maps and their gradients are bf16, the
/// parameters and their gradients F32. cuDNN runs its pseudo-bf16 configuration (bf16 tensors and
/// filters, FP32 accumulation, tensor-core engines whatever allow_tf32 says; its engines are
/// searched and cached apart from F32's). Each pass that needs the weight converts it to a bf16
/// copy in its workspace (in the layout the convolution runs in); the weight gradient comes out of
/// cuDNN in bf16 in the backward workspace and is converted into the F32 gradient, batch chunks
/// adding up in FP32; the bias is added in FP32 and rounded once, its gradient reduced in FP32 from
/// the bf16 output gradient. workspace() and workspace_options() count those copies.
///
/// Layouts (Note [Layout]): NCHW, NHWC, or an NCHW input (the network's) to an NHWC output, which
/// the forward and the weight gradient convert in their workspace and which takes no input
/// gradient; any other pair keeps NCHW so that the registry refuses it. In NHWC cuDNN runs KRSC
/// filters: a weight view laid out NHWC (KRSC, as graph::ParameterStore keeps an NHWC
/// convolution's weight) and its gradient are used as they are; a KCRS one (NCHW) is converted in
/// the pass's workspace and its gradient back. workspace() and workspace_options() include those
/// copies either way.
///
/// Backward reads the input (for the weight gradient), the output gradient and the weight; it
/// overwrites grad_params (weight, then bias) and writes or accumulates the input gradient unless
/// its view is empty. Not thread-safe. Throws runtime::InvalidArgument for dtypes other than F32
/// and BF16, a missing context or views that do not match the layer (feature maps of the layer's
/// dtype, parameters F32); runtime::CudaError when cuDNN fails (BF16 needs a GPU of compute
/// capability 8.0 or later).
class Conv2dCuda final : public Layer {
 public:
  Conv2dCuda(const Conv2dSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  /// conv2d_relu (Note [Fusion]): the same convolution (engines, layouts, chunks, parameters),
  /// then y = relu(y + bias) as one own pass over the output in place of cudnnAddTensor, bitwise
  /// the unfused conv2d -> relu. Backward also reads the output (backward_needs): it writes
  /// dz = y > 0 ? dy : 0 into a scratch region at the front of the backward workspace (counted in
  /// workspace() and workspace_options()), then runs the convolution's backward from dz.
  Conv2dCuda(const Conv2dReluSpec& spec, std::vector<Shape> input_shapes,
             const LayerOptions& options);
  ~Conv2dCuda() override;

  /// Forward: the forward engine's; backward: the larger of the data and filter gradients'
  /// (each after the layout staging, and for conv2d_relu after dz).
  WorkspaceBytes workspace() const override;
  void limit_workspace(const WorkspaceBytes& limit) override;
  /// From the measured times (negative with options.deterministic, ranked by heuristics); backward:
  /// the data and the filter gradients' under one limit.
  std::vector<WorkspaceOption> workspace_options(bool backward) const override;
  /// cuDNN's engine indices, e.g. "forward engine 62 (0 B), data engine 23 in 8 chunks (822 MiB),
  /// filter engine 0 (0 B)".
  std::string algorithms() const override;
  /// The batch chunks the forward, data-gradient and weight-gradient passes run in now.
  struct PassChunks {
    std::int64_t forward = 1;
    std::int64_t backward_data = 1;
    std::int64_t backward_filter = 1;
  };
  PassChunks chunks() const;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  struct Impl;

  Conv2dCuda(const LayerSpec& layer, const Conv2dSpec& spec, bool relu,
             std::vector<Shape> input_shapes, const LayerOptions& options);
  // The weight and the input the convolution reads: the views' memory, or their staged copies at
  // `scratch` (enqueued on the compute stream).
  void* staged_weight(const TensorView& weight, void* scratch) const;
  void* staged_input(const TensorView& x, void* scratch) const;

  Conv2dSpec spec_;
  bool relu_;  // conv2d_relu: the ReLU epilogue forward, its mask before backward
  std::vector<Shape> param_shapes_;  // weight, then bias when present
  std::unique_ptr<Impl> impl_;
};

}  // namespace vdnn::layers::cuda
