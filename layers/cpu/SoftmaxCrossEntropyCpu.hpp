// SoftmaxCrossEntropyCpu: mean softmax cross-entropy over the batch, with top-1 and top-5
// accuracy, on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Logits (N, ...) with K = sample_numel() classes and N int32 labels in args.labels; the output
/// [1] is the mean over samples of the cross-entropy against the target t = (1 - eps) * onehot +
/// eps / K (eps = options.label_smoothing, PyTorch's label_smoothing): (1 - eps) * (lse -
/// row[label])
/// + eps * (lse - mean(row)), lse = logsumexp(row). Forward fills *args.loss_stats when set
/// (top-1 and top-5 hits by ranks_above in layers/LossLabels.hpp). Backward reads the logits
/// (backward_needs: inputs) and writes grad_output[0] * (softmax - t) / N, honouring
/// GradTarget::accumulate. Both throw runtime::InvalidArgument for missing labels or a label
/// outside [0, K); the constructor for label_smoothing outside [0, 1]. Not thread-safe; see
/// layers/Layer.hpp for the argument contract.
class SoftmaxCrossEntropyCpu final : public Layer {
 public:
  SoftmaxCrossEntropyCpu(const SoftmaxCrossEntropySpec& spec, std::vector<Shape> input_shapes,
                         const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  double smoothing_;
};

}  // namespace vdnn::layers::cpu
