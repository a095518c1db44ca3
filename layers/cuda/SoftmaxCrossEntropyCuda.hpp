// SoftmaxCrossEntropyCuda: mean softmax cross-entropy over the batch, with top-1 and top-5
// accuracy, on the CUDA backend (own kernels), F32 or BF16 logits, FP32 loss.
#pragma once

#include <memory>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// Logits (N, ...) in device memory with K = sample_numel() classes, read as NCHW bytes: NHWC
/// logits (options.input_layout) are taken only where those bytes are the same (rank 2, one channel
/// or a 1 x 1 plane), else the layer keeps an NCHW input layout, which make_layer refuses; the
/// output [1] is the same in either options.layout. args.labels are N int32 in
/// HOST memory, checked on the host (runtime::InvalidArgument when missing or outside [0, K),
/// before anything is enqueued) and then copied to the device. The output [1] (device) is the mean
/// over samples of the cross-entropy against t = (1 - eps) * onehot + eps / K (eps =
/// options.label_smoothing in [0, 1], PyTorch's label_smoothing; the constructor throws
/// runtime::InvalidArgument outside it), as SoftmaxCrossEntropyCpu. When args.loss_stats is set,
/// forward delivers {loss, accuracy, top5} there without blocking the host: *args.loss_stats is
/// written once the compute stream has passed this forward, so it must stay valid until then and be
/// read only after that stream is synchronized (hits by ranks_above in layers/LossLabels.hpp, as on
/// the CPU: the same logits give the same accuracies bitwise). Pinned memory gets them by a copy on
/// the stream; other memory by a host function, which holds the stream until the driver has run it
/// (pass pinned memory where that matters). Backward reads the logits (backward_needs: inputs) and
/// grad_output[0] (device) and writes grad_output[0] * (softmax - t) / N, honouring
/// GradTarget::accumulate. Reductions run in a fixed order: results are bitwise reproducible. All
/// work is enqueued on options.cuda's compute stream. With options.dtype BF16 the logits and
/// their gradient are BF16 (read into float, the gradient rounded once) while the output [1] and
/// grad_output stay F32 views, and all arithmetic is FP32. The constructor allocates every buffer
/// once and throws runtime::InvalidArgument for a dtype other than F32 or BF16 or a missing
/// options.cuda. Not thread-safe; see layers/Layer.hpp.
class SoftmaxCrossEntropyCuda final : public Layer {
 public:
  SoftmaxCrossEntropyCuda(const SoftmaxCrossEntropySpec& spec,
                          const std::vector<Shape>& input_shapes, const LayerOptions& options);
  SoftmaxCrossEntropyCuda(const SoftmaxCrossEntropyCuda&) = delete;
  SoftmaxCrossEntropyCuda& operator=(const SoftmaxCrossEntropyCuda&) = delete;
  SoftmaxCrossEntropyCuda(SoftmaxCrossEntropyCuda&&) = delete;
  SoftmaxCrossEntropyCuda& operator=(SoftmaxCrossEntropyCuda&&) = delete;
  ~SoftmaxCrossEntropyCuda() override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  struct State;  // device and pinned buffers

  // Checks the host labels and enqueues their copy into the device buffer; returns that buffer.
  const std::int32_t* upload_labels(const std::int32_t* labels);

  runtime::cuda::DeviceContext* context_;
  std::unique_ptr<State> state_;
  float smoothing_;  // options.label_smoothing
};

}  // namespace vdnn::layers::cuda
