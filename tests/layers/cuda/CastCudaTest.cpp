// CastCuda against CastCpu, bit for bit: F32 -> BF16 forward (rounding to nearest even, ties,
// subnormals, overflow to infinity, NaN) with the BF16 -> F32 backward, overwriting and
// accumulating; and the reverse cast, BF16 -> F32 forward with an F32 -> BF16 accumulated backward.
// Both backends round once in the same way (an exact float sum, then one round-to-nearest-even),
// so no tolerance: every result must have the CPU's bits (any NaN matching any NaN).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "layers/Registry.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "runtime/BFloat16.hpp"
#include "runtime/Error.hpp"
#include "runtime/Random.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {
namespace {

using runtime::BFloat16;
using runtime::DType;
using runtime::Layout;
using runtime::Shape;
using runtime::TensorView;
using CastCuda = CudaLayerTest;

// A tensor's raw bytes, on the host and (as a copy) on the device.
struct Tensor {
  DType dtype;
  std::vector<std::uint8_t> bytes;
};

Tensor f32_tensor(const std::vector<float>& values) {
  Tensor t{DType::F32, std::vector<std::uint8_t>(values.size() * sizeof(float))};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

Tensor bf16_tensor(const std::vector<float>& values) {
  Tensor t{DType::BF16, std::vector<std::uint8_t>(values.size() * sizeof(BFloat16))};
  for (std::size_t i = 0; i < values.size(); ++i) {
    const BFloat16 b = runtime::to_bfloat16(values[i]);
    std::memcpy(t.bytes.data() + i * sizeof(BFloat16), &b, sizeof b);
  }
  return t;
}

float bits_to_float(std::uint32_t bits) {
  float f = 0.0f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// n floats that exercise the rounding: random values over many magnitudes, then values exactly
// halfway between two bf16 values (ties to even, both parities), just above and below a tie,
// subnormals, values that round up to infinity, infinities, signed zeros and a NaN.
std::vector<float> cast_inputs(std::int64_t n, std::uint64_t seed) {
  std::vector<float> values;
  const std::vector<std::uint32_t> special = {
      0x3F808000u,  // 1 + 2^-8: a tie, rounds down to the even 1.0
      0x3F818000u,  // a tie above an odd bf16 mantissa: rounds up
      0x3F808001u,  // just above a tie: rounds up
      0x3F807FFFu,  // just below a tie: rounds down
      0xBF818000u,  // a negative tie
      0x00000001u,  // the smallest subnormal
      0x00018000u,  // a subnormal tie
      0x807FFFFFu,  // the largest negative subnormal: rounds to -2^-126
      0x7F7FFFFFu,  // the largest float: rounds up to infinity
      0x7F7F7FFFu,  // rounds down to the largest finite bf16
      0x7F800000u,  // +inf
      0xFF800000u,  // -inf
      0x00000000u,  // +0
      0x80000000u,  // -0
      0x7FC00000u,  // a quiet NaN
  };
  for (const std::uint32_t bits : special) values.push_back(bits_to_float(bits));
  for (std::int64_t i = static_cast<std::int64_t>(values.size()); i < n; ++i) {
    const double u = runtime::uniform01(seed, 0, static_cast<std::uint64_t>(i));
    const double e = runtime::uniform01(seed, 1, static_cast<std::uint64_t>(i));
    values.push_back(
        static_cast<float>((2.0 * u - 1.0) * std::ldexp(1.0, static_cast<int>(e * 40) - 20)));
  }
  values.resize(static_cast<std::size_t>(n));
  return values;
}

// Whether element i of `t` is a NaN. A NaN's payload is no part of the contract (the device's
// conversion gives the canonical bf16 NaN, the host's keeps the float's upper bits), so any NaN
// matches any other.
bool is_nan(const Tensor& t, std::size_t i) {
  if (t.dtype == DType::F32) {
    float f = 0.0f;
    std::memcpy(&f, t.bytes.data() + i * sizeof f, sizeof f);
    return std::isnan(f);
  }
  BFloat16 b;
  std::memcpy(&b, t.bytes.data() + i * sizeof b, sizeof b);
  return std::isnan(runtime::to_float(b));
}

// The views one layer step reads and writes: host memory for the CPU layer, device copies for the
// CUDA layer (downloaded back by fetch()).
class Place {
 public:
  explicit Place(cudaStream_t stream) : stream_(stream) {}
  TensorView host(Tensor& t, const Shape& shape) { return {t.bytes.data(), shape, t.dtype}; }
  TensorView device(Tensor& t, const Shape& shape) {
    buffers_.push_back(std::make_unique<layers::cuda::DeviceBuffer>(t.bytes.size()));
    void* data = buffers_.back()->as<void>();
    VDNN_CHECK_CUDA(
        cudaMemcpyAsync(data, t.bytes.data(), t.bytes.size(), cudaMemcpyHostToDevice, stream_));
    copies_.push_back({&t, data});
    return {data, shape, t.dtype};
  }
  void fetch() {
    for (const auto& [t, data] : copies_) {
      VDNN_CHECK_CUDA(
          cudaMemcpyAsync(t->bytes.data(), data, t->bytes.size(), cudaMemcpyDeviceToHost, stream_));
    }
    VDNN_CHECK_CUDA(cudaStreamSynchronize(stream_));
  }

 private:
  cudaStream_t stream_;
  std::vector<std::unique_ptr<layers::cuda::DeviceBuffer>> buffers_;
  std::vector<std::pair<Tensor*, void*>> copies_;
};

struct CastStep {
  Tensor input, output, grad_output, grad_input;
};

// One forward and one backward of `layer` on the tensors of `step`, on the host or the device.
void run_cast(layers::Layer& layer, CastStep& step, bool accumulate, bool on_device,
              cudaStream_t stream) {
  const Shape& shape = layer.input_shapes()[0];
  Place place(stream);
  const auto view = [&](Tensor& t) {
    return on_device ? place.device(t, shape) : place.host(t, shape);
  };
  layers::ForwardArgs forward;
  forward.inputs = {view(step.input)};
  forward.output = view(step.output);
  layer.forward(forward);
  layers::BackwardArgs backward;
  backward.inputs = {TensorView{}};
  backward.grad_output = view(step.grad_output);
  backward.grad_inputs = {{view(step.grad_input), accumulate}};
  layer.backward(backward);
  if (on_device) place.fetch();
}

// A cast from `from` to `to` of a tensor of `shape` on both backends, overwriting or accumulating
// the input gradient: every byte of the output and of the input gradient must be the CPU's.
void expect_cast_matches(cudaStream_t stream, layers::LayerOptions cuda_options, DType from,
                         DType to, const Shape& shape, bool accumulate) {
  layers::CastSpec spec;
  spec.to = to;
  cuda_options.dtype = from;
  layers::LayerOptions cpu_options;
  cpu_options.dtype = from;
  auto cuda = layers::make_layer(layers::Backend::Cuda, spec, {shape}, cuda_options);
  auto cpu = layers::make_layer(layers::Backend::Cpu, spec, {shape}, cpu_options);

  const std::int64_t n = shape.numel();
  const auto tensor = [](DType dtype, const std::vector<float>& values) {
    return dtype == DType::BF16 ? bf16_tensor(values) : f32_tensor(values);
  };
  const std::vector<float> nans(static_cast<std::size_t>(n),
                                std::numeric_limits<float>::quiet_NaN());
  CastStep start{tensor(from, cast_inputs(n, 11)), tensor(to, nans), tensor(to, cast_inputs(n, 12)),
                 tensor(from, accumulate ? cast_inputs(n, 13) : nans)};
  CastStep on_cpu = start;
  CastStep on_gpu = start;
  run_cast(*cpu, on_cpu, accumulate, false, stream);
  run_cast(*cuda, on_gpu, accumulate, true, stream);
  const auto same_bytes = [&](const Tensor& a, const Tensor& b, const char* what) {
    const std::size_t element = a.dtype == DType::BF16 ? sizeof(BFloat16) : sizeof(float);
    for (std::size_t i = 0; i < a.bytes.size(); i += element) {
      if (std::memcmp(a.bytes.data() + i, b.bytes.data() + i, element) != 0 &&
          !(is_nan(a, i / element) && is_nan(b, i / element))) {
        ADD_FAILURE() << what << " differs at element " << i / element << " of "
                      << shape.to_string() << " (accumulate " << accumulate << ")";
        return;
      }
    }
  };
  same_bytes(on_cpu.output, on_gpu.output, "output");
  same_bytes(on_cpu.grad_input, on_gpu.grad_input, "input gradient");
}

const std::vector<Shape>& cast_shapes() {
  static const std::vector<Shape> table = {Shape{1, 1, 1, 17}, Shape{2, 3, 5, 7},
                                           Shape{4, 16, 9, 9}, Shape{3, 10}};
  return table;
}

TEST_F(CastCuda, F32ToBf16IsTheCpuBitForBit) {
  for (const Shape& s : cast_shapes()) {
    for (const bool accumulate : {false, true}) {
      expect_cast_matches(context().compute_stream(), options(), DType::F32, DType::BF16, s,
                          accumulate);
    }
  }
}

TEST_F(CastCuda, Bf16ToF32IsTheCpuBitForBit) {
  for (const Shape& s : cast_shapes()) {
    for (const bool accumulate : {false, true}) {
      expect_cast_matches(context().compute_stream(), options(), DType::BF16, DType::F32, s,
                          accumulate);
    }
  }
}

TEST_F(CastCuda, ChannelsLastCastsElementByElement) {
  layers::LayerOptions o = options();
  o.layout = Layout::Nhwc;
  o.input_layout = Layout::Nhwc;
  expect_cast_matches(context().compute_stream(), o, DType::F32, DType::BF16, Shape{2, 6, 5, 3},
                      true);
}

TEST_F(CastCuda, RefusesF64) {
  layers::CastSpec spec;
  spec.to = DType::F64;
  EXPECT_THROW(layers::make_layer(layers::Backend::Cuda, spec, {Shape{2, 3}}, options()),
               runtime::InvalidArgument);
  layers::LayerOptions o = options();
  o.dtype = DType::F64;
  EXPECT_THROW(layers::make_layer(layers::Backend::Cuda, layers::CastSpec{}, {Shape{2, 3}}, o),
               runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
