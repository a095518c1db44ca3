// LayerTestSupport: helpers shared by the CPU and CUDA layer tests: spec builders and case rows,
// random reference data, and host vectors seen as tensor views and compared with a reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "layers/Layer.hpp"
#include "layers/LayerSpec.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::test {

/// One row of a convolution shape table.
struct ConvCase {
  std::string name;
  runtime::Shape input;
  layers::Conv2dSpec spec;
  bool accumulate = false;  // add the input gradient to what the tensor already holds
};

/// One row of a pooling shape table; spec is a MaxPool2dSpec, AvgPool2dSpec or GlobalAvgPoolSpec.
struct PoolCase {
  std::string name;
  runtime::Shape input;
  layers::LayerSpec spec;
  bool accumulate = false;
};

inline layers::Conv2dSpec conv(std::int64_t out, layers::Pair kernel, layers::Pair stride = {1, 1},
                               layers::Pair padding = {0, 0}, layers::Pair dilation = {1, 1},
                               std::int64_t groups = 1, bool bias = false) {
  layers::Conv2dSpec spec;
  spec.out_channels = out;
  spec.kernel = kernel;
  spec.stride = stride;
  spec.padding = padding;
  spec.dilation = dilation;
  spec.groups = groups;
  spec.bias = bias;
  return spec;
}

inline layers::MaxPool2dSpec max_pool(layers::Pair kernel, layers::Pair stride,
                                      layers::Pair padding, bool ceil_mode = false) {
  layers::MaxPool2dSpec spec;
  spec.kernel = kernel;
  spec.stride = stride;
  spec.padding = padding;
  spec.ceil_mode = ceil_mode;
  return spec;
}

inline layers::AvgPool2dSpec avg_pool(layers::Pair kernel, layers::Pair stride,
                                      layers::Pair padding, bool count_include_pad) {
  layers::AvgPool2dSpec spec;
  spec.kernel = kernel;
  spec.stride = stride;
  spec.padding = padding;
  spec.count_include_pad = count_include_pad;
  return spec;
}

/// `count` values drawn uniformly from [-1, 1).
inline std::vector<double> random_values(std::int64_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> values(static_cast<std::size_t>(count));
  for (double& v : values) v = dist(rng);
  return values;
}

/// All tensors of one case of a layer with a weight and an optional bias, in double: the data fed
/// in and the reference results.
struct ParamLayerData {
  std::vector<double> x, weight, bias, dy, dx_before;
  std::vector<double> y, dx, dweight, dbias;
};

/// Random inputs drawn from `seed` in the order x, weight, bias, dy, dx_before (random only when
/// `accumulate`, else zeros), with zeroed results and dx starting from dx_before.
inline ParamLayerData random_param_layer_data(std::int64_t x_count, std::int64_t weight_count,
                                              std::int64_t bias_count, std::int64_t y_count,
                                              bool accumulate, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  ParamLayerData d;
  d.x = random_values(x_count, rng);
  d.weight = random_values(weight_count, rng);
  d.bias = random_values(bias_count, rng);
  d.dy = random_values(y_count, rng);
  d.dx_before = accumulate ? random_values(x_count, rng) : std::vector<double>(d.x.size(), 0.0);
  d.y.assign(d.dy.size(), 0.0);
  d.dx = d.dx_before;
  d.dweight.assign(d.weight.size(), 0.0);
  d.dbias.assign(d.bias.size(), 0.0);
  return d;
}

template <typename T>
std::vector<T> cast(const std::vector<double>& values) {
  return std::vector<T>(values.begin(), values.end());
}

/// A view of `values` (an empty view when there are none) with `shape` and T's dtype.
template <typename T>
layers::TensorView view_of(std::vector<T>& values, const runtime::Shape& shape) {
  return layers::TensorView{values.empty() ? nullptr : values.data(), shape,
                            runtime::dtype_of<T>()};
}

/// Values in memory aligned as the executor's pools align every tensor (256 bytes): Eigen's sums
/// take their vector lanes from the alignment of what they read, so two runs compare bit for bit
/// only when their tensors are aligned alike.
template <typename T>
class Aligned {
 public:
  explicit Aligned(const std::vector<T>& values)
      : storage_(values.size() + runtime::MemoryResource::kAlignment / sizeof(T)),
        size_(values.size()) {
    void* start = storage_.data();
    std::size_t space = storage_.size() * sizeof(T);
    data_ = static_cast<T*>(
        std::align(runtime::MemoryResource::kAlignment, size_ * sizeof(T), start, space));
    std::copy(values.begin(), values.end(), data_);
  }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;

  layers::TensorView view(const runtime::Shape& shape) {
    return {data_, shape, runtime::dtype_of<T>()};
  }
  T* data() const { return data_; }
  std::vector<T> values() const { return {data_, data_ + size_}; }

 private:
  std::vector<T> storage_;
  std::size_t size_;
  T* data_;
};

/// The batch-norm layers the row-strided view tests run (Note [Dense block storage]):
/// batchnorm2d, batchnorm2d_relu without and with the residual, batchnorm2d_silu.
enum class BatchNormKind { Plain, Relu, AddRelu, Silu };
inline constexpr BatchNormKind kBatchNormKinds[] = {BatchNormKind::Plain, BatchNormKind::Relu,
                                                    BatchNormKind::AddRelu, BatchNormKind::Silu};

inline layers::LayerSpec batch_norm_spec(BatchNormKind kind) {
  layers::BatchNorm2dSpec bn;
  bn.momentum = 0.3;
  switch (kind) {
    case BatchNormKind::Plain:
      return bn;
    case BatchNormKind::Relu:
    case BatchNormKind::AddRelu:
      return layers::BatchNormReluSpec{bn, kind == BatchNormKind::AddRelu};
    case BatchNormKind::Silu:
      break;
  }
  return layers::BatchNormActivationSpec{bn, layers::Activation::Silu};
}

/// The NCHW-ordered values of a map of `wide` channels whose first shape.c() channels are those of
/// `x` (NCHW-ordered, of `shape`) and the others `fill`: what a row-strided prefix view reads.
template <typename T>
std::vector<T> widened(const std::vector<T>& x, const runtime::Shape& shape, std::int64_t wide,
                       T fill) {
  const std::int64_t sample = shape.sample_numel();
  const std::int64_t wide_sample = wide * shape.h() * shape.w();
  std::vector<T> out(static_cast<std::size_t>(shape.n() * wide_sample), fill);
  for (std::int64_t n = 0; n < shape.n(); ++n) {
    std::copy_n(x.begin() + n * sample, sample, out.begin() + n * wide_sample);
  }
  return out;
}

/// Every element within tolerance * max(1, |expected|) of the reference.
template <typename T>
void expect_close(const std::vector<T>& actual, const std::vector<double>& expected,
                  double tolerance, const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(actual[i]), expected[i],
                tolerance * std::max(1.0, std::abs(expected[i])))
        << what << " at " << i;
  }
}

}  // namespace vdnn::test
