// Batch normalization on the CPU backend. Statistics are accumulated in double whatever the
// tensor type, and each (sample, channel) plane is one contiguous Eigen map, x's found through its
// row pitch (a row-strided view, Note [Dense block storage]).
#include "layers/cpu/BatchNorm2dCpu.hpp"

#include <Eigen/Core>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "layers/cpu/RankSums.hpp"
#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
namespace {

template <typename T>
using Plane = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstPlane = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// Addresses plane (n, c) of an NCHW tensor whose samples are `sample_pitch` elements apart.
struct PlaneIndex {
  std::int64_t channels;
  std::int64_t pixels;
  std::int64_t sample_pitch;
  std::int64_t offset(std::int64_t n, std::int64_t c) const {
    return n * sample_pitch + c * pixels;
  }
};

// The planes of a packed NCHW tensor of `shape`.
PlaneIndex packed_planes(const Shape& shape) {
  return {shape.c(), shape.h() * shape.w(), shape.sample_numel()};
}

// The planes of x, of `shape`: packed, or a sample every row_stride elements.
PlaneIndex x_planes(const Shape& shape, const TensorView& x) {
  PlaneIndex planes = packed_planes(shape);
  if (x.row_stride == 0) return planes;
  VDNN_EXPECTS(x.layout == Layout::Nchw && x.row_stride >= planes.sample_pitch,
               "batchnorm2d on the CPU: a row-strided x is NCHW, a sample per row");
  planes.sample_pitch = x.row_stride;
  return planes;
}

}  // namespace

BatchNorm2dCpu::BatchNorm2dCpu(const BatchNorm2dSpec& spec, std::vector<Shape> input_shapes,
                               const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      spec_(spec),
      // this->: the moved-from parameter input_shapes hides the accessor here.
      mean_(static_cast<std::size_t>(this->input_shapes()[0].c())),
      inv_std_(mean_.size()),
      group_(options.batch_norm_group) {}

template <typename T>
void BatchNorm2dCpu::batch_statistics(const T* x, std::int64_t x_sample_pitch, T* running_mean,
                                      T* running_var) {
  const Shape& shape = input_shapes()[0];
  const PlaneIndex at{shape.c(), shape.h() * shape.w(), x_sample_pitch};
  const auto ranks = static_cast<double>(group_ == nullptr ? 1 : group_->size());
  const double count = static_cast<double>(shape.n() * at.pixels) * ranks;
  // Per-channel sums, over the ranks of a synchronized batch norm, then the means from them.
  std::vector<double>& sums = mean_;
  for (std::int64_t c = 0; c < at.channels; ++c) {
    double sum = 0.0;
    for (std::int64_t n = 0; n < shape.n(); ++n) {
      sum += static_cast<double>(ConstPlane<T>(x + at.offset(n, c), at.pixels).sum());
    }
    sums[static_cast<std::size_t>(c)] = sum;
  }
  sum_over_ranks(group_, sums);
  for (double& m : mean_) m /= count;
  // Two passes: the centred sum of squares does not cancel when |mean| >> std.
  std::vector<double>& squares = inv_std_;
  for (std::int64_t c = 0; c < at.channels; ++c) {
    const auto mean = static_cast<T>(mean_[static_cast<std::size_t>(c)]);
    double sum = 0.0;
    for (std::int64_t n = 0; n < shape.n(); ++n) {
      sum += static_cast<double>(
          (ConstPlane<T>(x + at.offset(n, c), at.pixels) - mean).square().sum());
    }
    squares[static_cast<std::size_t>(c)] = sum;
  }
  sum_over_ranks(group_, squares);
  const double momentum = spec_.momentum;
  for (std::int64_t c = 0; c < at.channels; ++c) {
    const auto ch = static_cast<std::size_t>(c);
    const double var = squares[ch] / count;
    inv_std_[ch] = 1.0 / std::sqrt(var + spec_.eps);
    running_mean[c] = static_cast<T>((1.0 - momentum) * running_mean[c] + momentum * mean_[ch]);
    running_var[c] =
        static_cast<T>((1.0 - momentum) * running_var[c] + momentum * var * count / (count - 1.0));
  }
}

template <typename T>
void BatchNorm2dCpu::forward_typed(const ForwardArgs& args) {
  const Shape& shape = input_shapes()[0];
  const PlaneIndex at = packed_planes(shape);
  const PlaneIndex x_at = x_planes(shape, args.inputs[0]);
  if (args.training) {
    VDNN_EXPECTS(shape.n() * at.pixels > 1,
                 "batchnorm2d training needs more than one value per channel");
  }
  const T* x = args.inputs[0].as<T>();
  T* y = args.output.as<T>();
  const T* weight = args.params[0].as<T>();
  const T* bias = args.params[1].as<T>();
  T* running_mean = args.params[2].as<T>();
  T* running_var = args.params[3].as<T>();
  batch_stats_ = args.training;
  // A recompute normalizes with the statistics the first forward saved: the same bits, and the
  // running buffers are updated (and the ranks' sums taken) once per step (Note [Recomputation]).
  if (args.training && !args.recompute)
    batch_statistics(x, x_at.sample_pitch, running_mean, running_var);
  for (std::int64_t c = 0; c < at.channels; ++c) {
    const auto ch = static_cast<std::size_t>(c);
    if (!args.training) {
      mean_[ch] = running_mean[c];
      inv_std_[ch] = 1.0 / std::sqrt(static_cast<double>(running_var[c]) + spec_.eps);
    }
    const double scale = weight[c] * inv_std_[ch];
    const auto a = static_cast<T>(scale);
    const auto b = static_cast<T>(bias[c] - mean_[ch] * scale);
    for (std::int64_t n = 0; n < shape.n(); ++n) {
      Plane<T>(y + at.offset(n, c), at.pixels) =
          ConstPlane<T>(x + x_at.offset(n, c), at.pixels) * a + b;
    }
  }
}

template <typename T>
void BatchNorm2dCpu::backward_typed(const BackwardArgs& args) {
  const Shape& shape = input_shapes()[0];
  const PlaneIndex at = packed_planes(shape);
  const PlaneIndex x_at = x_planes(shape, args.inputs[0]);
  const T* x = args.inputs[0].as<T>();
  const T* dy = args.grad_output.as<T>();
  const T* weight = args.params[0].as<T>();
  const TensorView& grad_weight = args.grad_params[0];
  const TensorView& grad_bias = args.grad_params[1];
  const GradTarget& target = args.grad_inputs[0];
  // Per channel: sum of dy, then sum of dy * (x - mean), this rank's.
  std::vector<double> sums(2 * static_cast<std::size_t>(at.channels));
  for (std::int64_t c = 0; c < at.channels; ++c) {
    const auto ch = static_cast<std::size_t>(c);
    const auto mean = static_cast<T>(mean_[ch]);
    for (std::int64_t n = 0; n < shape.n(); ++n) {
      const ConstPlane<T> dy_plane(dy + at.offset(n, c), at.pixels);
      sums[2 * ch] += static_cast<double>(dy_plane.sum());
      sums[2 * ch + 1] += static_cast<double>(
          (dy_plane * (ConstPlane<T>(x + x_at.offset(n, c), at.pixels) - mean)).sum());
    }
    const double inv_std = inv_std_[ch];
    if (!grad_weight.empty()) grad_weight.as<T>()[c] = static_cast<T>(sums[2 * ch + 1] * inv_std);
    if (!grad_bias.empty()) grad_bias.as<T>()[c] = static_cast<T>(sums[2 * ch]);
  }
  if (target.tensor.empty()) return;
  // The statistics were the ranks' together: so are the input gradient's sums (the parameters'
  // gradients stay this rank's, averaged with the others' by the gradient exchange).
  const auto ranks = static_cast<double>(group_ == nullptr ? 1 : group_->size());
  const double count = static_cast<double>(shape.n() * at.pixels) * ranks;
  if (batch_stats_) sum_over_ranks(group_, sums);
  for (std::int64_t c = 0; c < at.channels; ++c) {
    const auto ch = static_cast<std::size_t>(c);
    const auto mean = static_cast<T>(mean_[ch]);
    const double inv_std = inv_std_[ch];
    // dx = a * dy + b * (x - mean) + k. With batch statistics, mean and inv_std depend on x, which
    // gives b and k; with running statistics they are constants and only a remains.
    const double a = weight[c] * inv_std;
    const auto a_t = static_cast<T>(a);
    const auto b_t =
        static_cast<T>(batch_stats_ ? -a * inv_std * inv_std * sums[2 * ch + 1] / count : 0.0);
    const auto k_t = static_cast<T>(batch_stats_ ? -a * sums[2 * ch] / count : 0.0);
    for (std::int64_t n = 0; n < shape.n(); ++n) {
      const std::int64_t offset = at.offset(n, c);
      const ConstPlane<T> dy_plane(dy + offset, at.pixels);
      const ConstPlane<T> x_plane(x + x_at.offset(n, c), at.pixels);
      const auto g = dy_plane * a_t + (x_plane - mean) * b_t + k_t;
      Plane<T> dx(target.tensor.as<T>() + offset, at.pixels);
      if (target.accumulate) {
        dx += g;
      } else {
        dx = g;
      }
    }
  }
}

void BatchNorm2dCpu::normalize_again(const TensorView& x, const std::vector<TensorView>& params,
                                     const TensorView& out) {
  ForwardArgs args;
  args.inputs = {x};
  args.params = params;
  args.output = out;
  args.training = batch_stats_;
  args.recompute = batch_stats_;
  forward(args);
}

void BatchNorm2dCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    forward_typed<double>(args);
  } else {
    forward_typed<float>(args);
  }
}

void BatchNorm2dCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    backward_typed<double>(args);
  } else {
    backward_typed<float>(args);
  }
}

}  // namespace vdnn::layers::cpu
