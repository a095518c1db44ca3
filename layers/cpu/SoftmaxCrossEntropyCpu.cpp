// Softmax cross-entropy on the CPU backend. Every row goes through log-sum-exp shifted by its
// maximum, so large logits neither overflow nor lose the loss to cancellation.
#include "layers/cpu/SoftmaxCrossEntropyCpu.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "layers/LossLabels.hpp"
#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
namespace {

template <typename T>
using ConstRow = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using Row = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

template <typename T>
T log_sum_exp(const ConstRow<T>& row, T max) {
  return max + std::log((row - max).exp().sum());
}

// How many logits of `row` rank above the label's (ranks_above).
template <typename T>
std::int64_t label_rank(const T* row, std::int64_t classes, std::int32_t label) {
  std::int64_t rank = 0;
  for (std::int64_t j = 0; j < classes; ++j) {
    if (ranks_above(row[j], j, row[label], label)) ++rank;
  }
  return rank;
}

template <typename T>
void xent_forward(const Shape& shape, const ForwardArgs& args, double smoothing) {
  const std::int64_t samples = shape.n();
  const std::int64_t classes = shape.sample_numel();
  check_labels(args.labels, samples, classes);
  const T* logits = args.inputs[0].as<T>();
  double loss_sum = 0.0;
  std::int64_t top1_hits = 0;
  std::int64_t top5_hits = 0;
  for (std::int64_t n = 0; n < samples; ++n) {
    const T* begin = logits + n * classes;
    const T max = *std::max_element(begin, begin + classes);
    const std::int32_t label = args.labels[n];
    const ConstRow<T> row(begin, classes);
    const T lse = log_sum_exp(row, max);
    const T nll = lse - begin[label];
    const auto eps = static_cast<T>(smoothing);
    // Branched, so that eps 0 gives exactly the plain loss (even where lse - mean is infinite).
    const T loss = smoothing == 0.0 ? nll : (1 - eps) * nll + eps * (lse - row.mean());
    loss_sum += static_cast<double>(loss);
    const std::int64_t rank = label_rank(begin, classes, label);
    if (rank < 1) ++top1_hits;
    if (rank < kTopK) ++top5_hits;
  }
  const double loss = loss_sum / static_cast<double>(samples);
  args.output.as<T>()[0] = static_cast<T>(loss);
  if (args.loss_stats != nullptr) {
    const auto fraction = [samples](std::int64_t hits) {
      return static_cast<double>(hits) / static_cast<double>(samples);
    };
    *args.loss_stats = {loss, fraction(top1_hits), fraction(top5_hits)};
  }
}

template <typename T>
void xent_backward(const Shape& shape, const BackwardArgs& args, double smoothing) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  const std::int64_t samples = shape.n();
  const std::int64_t classes = shape.sample_numel();
  check_labels(args.labels, samples, classes);
  const T* logits = args.inputs[0].as<T>();
  T* grad = target.tensor.as<T>();
  const T scale = args.grad_output.as<T>()[0] / static_cast<T>(samples);
  // The target's parts: on the label, and on every class.
  const T on_label = scale * static_cast<T>(1.0 - smoothing);
  const T on_every = scale * static_cast<T>(smoothing / static_cast<double>(classes));
  for (std::int64_t n = 0; n < samples; ++n) {
    const ConstRow<T> row(logits + n * classes, classes);
    Row<T> dx(grad + n * classes, classes);
    const T lse = log_sum_exp(row, row.maxCoeff());
    if (target.accumulate) {
      dx += scale * (row - lse).exp() - on_every;
    } else {
      dx = scale * (row - lse).exp() - on_every;
    }
    dx[args.labels[n]] -= on_label;
  }
}

}  // namespace

SoftmaxCrossEntropyCpu::SoftmaxCrossEntropyCpu(const SoftmaxCrossEntropySpec& spec,
                                               std::vector<Shape> input_shapes,
                                               const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype), smoothing_(options.label_smoothing) {
  VDNN_EXPECTS(smoothing_ >= 0.0 && smoothing_ <= 1.0,
               "label_smoothing must be in [0, 1], got " + std::to_string(smoothing_));
}

void SoftmaxCrossEntropyCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    xent_forward<double>(input_shapes()[0], args, smoothing_);
  } else {
    xent_forward<float>(input_shapes()[0], args, smoothing_);
  }
}

void SoftmaxCrossEntropyCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    xent_backward<double>(input_shapes()[0], args, smoothing_);
  } else {
    xent_backward<float>(input_shapes()[0], args, smoothing_);
  }
}

}  // namespace vdnn::layers::cpu
