// Softmax cross-entropy on the CUDA backend: one block per sample for the row statistics and one
// block for the batch mean, both reducing in a fixed order, then a copy (into pinned memory) or a
// host callback (elsewhere) that hands the statistics to the host without blocking it. BF16 logits
// are read into float: the softmax, the loss and its output stay FP32; only the logits' gradient is
// stored in BF16.
#include "layers/cuda/SoftmaxCrossEntropyCuda.hpp"

#include <cmath>
#include <cstddef>
#include <string>

#include "layers/LossLabels.hpp"
#include "layers/cuda/BlockReduce.cuh"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/Elements.cuh"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// What forward hands from the device to the host. The destination travels with the numbers, so
// each forward's callback writes where that forward was asked to, even when the host has enqueued
// later forwards meanwhile.
struct StatsRecord {
  LossStats stats;
  LossStats* destination;
};

void CUDART_CB deliver_stats(void* pinned_record) {
  const auto& record = *static_cast<const StatsRecord*>(pinned_record);
  *record.destination = record.stats;
}

// True for page-locked host memory, which a copy on the stream can write without the host.
bool pinned(const void* host) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, host) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());  // older drivers refuse plain host pointers
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

// Block-wide maximum of a row; every thread gets it.
template <typename T>
__device__ float block_row_max(const T* row, std::int64_t classes) {
  float max = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    max = Max{}(max, to_float(row[j]));
  }
  return block_reduce(max, Max{});
}

// Per sample n (one block each): losses[n] = (1 - eps) * (lse - row[label]) + eps * (lse -
// mean(row)), lse = logsumexp(row), and ranks[n] = how many logits rank above the label's
// (ranks_above, the CPU layer's rule).
template <typename T>
__global__ void loss_rows_kernel(const T* logits, const std::int32_t* labels, std::int64_t classes,
                                 float smoothing, float* losses, std::int64_t* ranks) {
  const std::int64_t n = blockIdx.x;
  const T* row = logits + n * classes;
  const std::int32_t label = labels[n];
  const float label_logit = to_float(row[label]);
  const float max = block_row_max(row, classes);
  float sum = 0.0f;
  float logit_sum = 0.0f;
  std::int64_t above = 0;
  for (std::int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    const float logit = to_float(row[j]);
    sum += expf(logit - max);
    logit_sum += logit;
    if (ranks_above(logit, j, label_logit, label)) ++above;
  }
  sum = block_reduce(sum, Sum{});
  logit_sum = block_reduce(logit_sum, Sum{});
  above = block_reduce(above, Sum{});
  if (threadIdx.x != 0) return;
  const float lse = max + logf(sum);
  const float nll = lse - label_logit;
  // Branched, so that eps 0 gives exactly the plain loss (even where lse - mean is infinite).
  losses[n] = smoothing == 0.0f ? nll
                                : (1.0f - smoothing) * nll +
                                      smoothing * (lse - logit_sum / static_cast<float>(classes));
  ranks[n] = above;
}

// One block: the batch mean into `output` and the statistics record for the host.
__global__ void loss_mean_kernel(const float* losses, const std::int64_t* ranks,
                                 std::int64_t samples, float* output, StatsRecord* record,
                                 LossStats* destination) {
  double loss = 0.0;
  std::int64_t top1_hits = 0;
  std::int64_t top5_hits = 0;
  for (std::int64_t i = threadIdx.x; i < samples; i += blockDim.x) {
    loss += losses[i];
    if (ranks[i] < 1) ++top1_hits;
    if (ranks[i] < kTopK) ++top5_hits;
  }
  loss = block_reduce(loss, Sum{});
  top1_hits = block_reduce(top1_hits, Sum{});
  top5_hits = block_reduce(top5_hits, Sum{});
  if (threadIdx.x != 0) return;
  const double mean = loss / static_cast<double>(samples);
  output[0] = static_cast<float>(mean);
  const auto fraction = [samples](std::int64_t hits) {
    return static_cast<double>(hits) / static_cast<double>(samples);
  };
  *record = {{mean, fraction(top1_hits), fraction(top5_hits)}, destination};
}

// Per sample n (one block each): dx (+)= grad_loss / N * (softmax(row) - t), t = (1 - eps) *
// onehot(label) + eps / K.
template <typename T>
__global__ void loss_backward_kernel(const T* logits, const std::int32_t* labels,
                                     const float* grad_loss, std::int64_t samples,
                                     std::int64_t classes, float smoothing, T* dx,
                                     bool accumulate) {
  const std::int64_t n = blockIdx.x;
  const T* row = logits + n * classes;
  const float max = block_row_max(row, classes);
  float sum = 0.0f;
  for (std::int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    sum += expf(to_float(row[j]) - max);
  }
  const float log_sum_exp = max + logf(block_reduce(sum, Sum{}));
  const float scale = grad_loss[0] / static_cast<float>(samples);
  const float on_label = scale * (1.0f - smoothing);
  const float on_every = scale * (smoothing / static_cast<float>(classes));
  const std::int32_t label = labels[n];
  T* out = dx + n * classes;
  for (std::int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    const float g =
        scale * expf(to_float(row[j]) - log_sum_exp) - (j == label ? on_label : 0.0f) - on_every;
    out[j] = from_float<T>(accumulate ? to_float(out[j]) + g : g);
  }
}

template <typename T>
std::size_t bytes_of(std::int64_t count) {
  return sizeof(T) * static_cast<std::size_t>(count);
}

}  // namespace

struct SoftmaxCrossEntropyCuda::State {
  explicit State(std::int64_t samples)
      : labels(bytes_of<std::int32_t>(samples)),
        losses(bytes_of<float>(samples)),
        ranks(bytes_of<std::int64_t>(samples)),
        record(sizeof(StatsRecord)),
        pinned_record(sizeof(StatsRecord)) {}

  DeviceBuffer labels;         // [N] int32, copied from the host labels of the current call
  DeviceBuffer losses;         // [N] float, per-sample losses of the last forward
  DeviceBuffer ranks;          // [N] int64, logits ranked above the label in the last forward
  DeviceBuffer record;         // StatsRecord of the last forward
  PinnedBuffer pinned_record;  // its copy on the host, read by deliver_stats
};

SoftmaxCrossEntropyCuda::SoftmaxCrossEntropyCuda(const SoftmaxCrossEntropySpec& spec,
                                                 const std::vector<Shape>& input_shapes,
                                                 const LayerOptions& options)
    // The output [1] is the same in either layout.
    : Layer(spec, input_shapes, options.dtype, options.layout,
            nchw_bytes_layout(input_shapes, options.input_layout)),
      context_(&checked_context(options, "SoftmaxCrossEntropyCuda", Precisions::F32OrBf16)),
      // this->: the parameter input_shapes hides the accessor here.
      state_(std::make_unique<State>(this->input_shapes()[0].n())),
      smoothing_(static_cast<float>(options.label_smoothing)) {
  VDNN_EXPECTS(options.label_smoothing >= 0.0 && options.label_smoothing <= 1.0,
               "label_smoothing must be in [0, 1], got " + std::to_string(options.label_smoothing));
}

SoftmaxCrossEntropyCuda::~SoftmaxCrossEntropyCuda() = default;

const std::int32_t* SoftmaxCrossEntropyCuda::upload_labels(const std::int32_t* labels) {
  const std::int64_t samples = input_shapes()[0].n();
  const std::int64_t classes = input_shapes()[0].sample_numel();
  check_labels(labels, samples, classes);
  // From pageable memory CUDA stages the labels before returning: the caller may reuse them.
  auto* device_labels = state_->labels.as<std::int32_t>();
  VDNN_CHECK_CUDA(cudaMemcpyAsync(device_labels, labels, bytes_of<std::int32_t>(samples),
                                  cudaMemcpyHostToDevice, context_->compute_stream()));
  return device_labels;
}

void SoftmaxCrossEntropyCuda::forward(const ForwardArgs& args) {
  const std::int64_t samples = input_shapes()[0].n();
  const std::int64_t classes = input_shapes()[0].sample_numel();
  const std::int32_t* labels = upload_labels(args.labels);
  cudaStream_t stream = context_->compute_stream();
  auto* losses = state_->losses.as<float>();
  auto* ranks = state_->ranks.as<std::int64_t>();
  auto* record = state_->record.as<StatsRecord>();
  with_element_type(dtype(), [&](auto element) {
    using T = DeviceElementOf<decltype(element)>;
    loss_rows_kernel<<<static_cast<unsigned>(samples), kReduceBlock, 0, stream>>>(
        device_data<T>(args.inputs[0]), labels, classes, smoothing_, losses, ranks);
  });
  VDNN_CHECK_LAUNCH();
  loss_mean_kernel<<<1, kReduceBlock, 0, stream>>>(losses, ranks, samples, args.output.as<float>(),
                                                   record, args.loss_stats);
  VDNN_CHECK_LAUNCH();
  if (args.loss_stats == nullptr) return;
  // Pinned memory takes the statistics by a copy; elsewhere a host function delivers them, which
  // holds the stream until the driver's callback thread has run it.
  if (pinned(args.loss_stats)) {
    VDNN_CHECK_CUDA(cudaMemcpyAsync(args.loss_stats, &record->stats, sizeof(LossStats),
                                    cudaMemcpyDeviceToHost, stream));
    return;
  }
  auto* pinned_record = state_->pinned_record.as<StatsRecord>();
  VDNN_CHECK_CUDA(
      cudaMemcpyAsync(pinned_record, record, sizeof(StatsRecord), cudaMemcpyDeviceToHost, stream));
  VDNN_CHECK_CUDA(cudaLaunchHostFunc(stream, deliver_stats, pinned_record));
}

void SoftmaxCrossEntropyCuda::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  const std::int64_t samples = input_shapes()[0].n();
  const std::int32_t* labels = upload_labels(args.labels);
  with_element_type(dtype(), [&](auto element) {
    using T = DeviceElementOf<decltype(element)>;
    loss_backward_kernel<<<static_cast<unsigned>(samples), kReduceBlock, 0,
                           context_->compute_stream()>>>(
        device_data<T>(args.inputs[0]), labels, args.grad_output.as<float>(), samples,
        input_shapes()[0].sample_numel(), smoothing_, device_data<T>(target.tensor),
        target.accumulate);
  });
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
