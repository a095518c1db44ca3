// Conv2dCuda and the fused conv2d_relu in BF16 (Note [Precision]) against the CPU layers run in F32
// on the same bf16-rounded data: NCHW, NHWC and the stem's NCHW input to NHWC output, groups, bias,
// accumulated input gradients, batch chunks and bitwise repeatability; the workspace that counts
// the bf16 weight copies; and the staging kernels (type and layout conversions, per-channel sums of
// bf16) against host arithmetic.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/cuda/ChannelSums.hpp"
#include "layers/cuda/Conv2dCuda.hpp"
#include "layers/cuda/ConvEpilogue.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "runtime/BFloat16.hpp"
#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {
namespace {

using layers::Conv2dReluSpec;
using layers::Conv2dSpec;
using layers::LayerOptions;
using runtime::DType;
using runtime::Layout;
using runtime::Shape;
using ConvBf16Cuda = CudaLayerTest;

// bf16 keeps 8 significant bits. The layer rounds its bf16 weight copy and every tensor it stores
// (y, dx, cuDNN's dW) once, after FP32 accumulation: relative errors of at most 2^-8 per rounding,
// which over the sums below stay under 1 % of a tensor's largest element; 2 % leaves room for the
// algorithms' own orders of summation.
constexpr double kBf16Tolerance = 2e-2;

struct Layouts {
  Layout input;
  Layout output;
  const char* name;
};
constexpr Layouts kLayouts[] = {{Layout::Nchw, Layout::Nchw, "nchw"},
                                {Layout::Nhwc, Layout::Nhwc, "nhwc"},
                                {Layout::Nchw, Layout::Nhwc, "nchw input, nhwc output"}};

LayerOptions bf16(LayerOptions o, const Layouts& layouts) {
  o.dtype = DType::BF16;
  o.deterministic = true;
  o.input_layout = layouts.input;
  o.layout = layouts.output;
  return o;
}

std::vector<ConvCase> cases() {
  return {
      {"3x3_pad1_bias", Shape{2, 3, 7, 7}, conv(4, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)},
      {"3x3_stride2_pad1", Shape{1, 4, 9, 8}, conv(8, {3, 3}, {2, 2}, {1, 1})},
      {"groups2_bias", Shape{2, 4, 6, 6}, conv(6, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, true)},
      {"depthwise_bias", Shape{2, 8, 7, 7}, conv(8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 8, true)},
      {"1x1_bias", Shape{3, 8, 5, 4}, conv(16, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true)},
      {"7x7_stride2_pad3_stem", Shape{2, 3, 32, 32}, conv(16, {7, 7}, {2, 2}, {3, 3})},
      {"3x3_32_to_64_bias", Shape{4, 32, 14, 14},
       conv(64, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)},
      {"accumulate_3x3_stride2", Shape{2, 8, 8, 7}, conv(8, {3, 3}, {2, 2}, {1, 1}), true},
      {"accumulate_1x1_groups_bias", Shape{2, 4, 3, 5},
       conv(6, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 2, true), true},
  };
}

TEST_F(ConvBf16Cuda, MatchesCpuInEveryLayout) {
  for (const Layouts& layouts : kLayouts) {
    for (const ConvCase& c : cases()) {
      SCOPED_TRACE(std::string(layouts.name) + " " + c.name);
      layers::cuda::Conv2dCuda layer(c.spec, {c.input}, bf16(options(), layouts));
      ASSERT_EQ(layer.dtype(), DType::BF16);
      ASSERT_EQ(layer.layout(), layouts.output);
      ASSERT_EQ(layer.input_layout(), layouts.input);
      StepSettings settings;
      settings.norm_tolerance = kBf16NormTolerance;
      // The stem reads the network input, which takes no gradient.
      settings.input_grads = layouts.input == layouts.output;
      settings.accumulate = c.accumulate && settings.input_grads;
      settings.bitwise_repeatable = true;
      EXPECT_TRUE(cuda_matches_cpu(context(), layer, kBf16Tolerance, settings));
    }
  }
}

// Named by the output's channels C and plane H * W: the bf16 epilogue runs four elements at once
// where C % 4 == 0 (NHWC) or H * W % 4 == 0 (NCHW), one element per thread elsewhere.
TEST_F(ConvBf16Cuda, FusedReluMatchesCpuInEveryLayout) {
  const std::vector<ConvCase> relu_cases = {
      {"C6_HW49", Shape{2, 3, 7, 7}, conv(6, {3, 3}, {1, 1}, {1, 1})},
      {"C8_HW64_bias", Shape{2, 4, 8, 8}, conv(8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)},
      {"C12_HW30_bias", Shape{2, 5, 6, 5}, conv(12, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)},
      {"C3_HW25_bias", Shape{1, 3, 5, 5}, conv(3, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true)},
      // No bias at this size: with a bias, the stored pre-activation is round(round(conv) + bias)
      // (the unfused chain's bits), whose sign differs from the CPU's F32 conv + bias wherever
      // |conv + bias| is within a bf16 rounding of |conv| (about 0.1 % of 50176 outputs here). The
      // ReLU mask then differs there by the whole dy, which no rounding tolerance covers. Without a
      // bias (and with bf16 weights, below) the sign is that of the FP32 sum, as on the CPU. The
      // small cases above keep the bias.
      {"C64_HW196", Shape{4, 32, 14, 14}, conv(64, {3, 3}, {1, 1}, {1, 1}, {1, 1}), true},
  };
  for (const Layouts& layouts : kLayouts) {
    for (const ConvCase& c : relu_cases) {
      SCOPED_TRACE(std::string(layouts.name) + " " + c.name);
      layers::cuda::Conv2dCuda layer(Conv2dReluSpec{c.spec}, {c.input}, bf16(options(), layouts));
      StepSettings settings;
      settings.norm_tolerance = kBf16NormTolerance;
      settings.input_grads = layouts.input == layouts.output;
      settings.accumulate = c.accumulate && settings.input_grads;
      // The mask follows y: the CPU must compute with the layer's bf16 weights (StepSettings).
      settings.bf16_params = true;
      EXPECT_TRUE(cuda_matches_cpu(context(), layer, kBf16Tolerance, settings));
    }
  }
}

TEST_F(ConvBf16Cuda, EmptyInputGradientTargetStillGivesParameterGradients) {
  for (const Layouts& layouts : kLayouts) {
    SCOPED_TRACE(layouts.name);
    layers::cuda::Conv2dCuda layer(conv(8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true),
                                   {Shape{2, 4, 9, 9}}, bf16(options(), layouts));
    StepSettings settings;
    settings.norm_tolerance = kBf16NormTolerance;
    settings.input_grads = false;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kBf16Tolerance, settings));
  }
}

// Note [Batch chunks]: the weight gradients of the chunks add up in FP32 in the F32 gradient (not
// in bf16), so a chunked run matches the CPU as closely as a whole one.
TEST_F(ConvBf16Cuda, BatchChunksMatchAndRepeatBitwise) {
  const Conv2dSpec spec = conv(64, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true);
  for (const Layouts& layouts : {kLayouts[0], kLayouts[1]}) {
    SCOPED_TRACE(layouts.name);
    layers::cuda::Conv2dCuda layer(spec, {Shape{32, 64, 56, 56}}, bf16(options(), layouts));
    const layers::WorkspaceBytes fastest = layer.workspace();
    if (fastest.backward <= (std::size_t{16} << 20)) {
      std::cout << "[          ] backward workspace " << fastest.backward
                << " B: too small to be chunked\n";
      continue;
    }
    layer.limit_workspace({layers::kUnlimitedWorkspace, fastest.backward - 1});
    const layers::cuda::Conv2dCuda::PassChunks chunks = layer.chunks();
    std::cout << "[          ] " << layer.algorithms() << "\n";
    EXPECT_GT(std::max(chunks.backward_data, chunks.backward_filter), 1);
    for (const bool accumulate : {false, true}) {
      SCOPED_TRACE(accumulate ? "accumulate" : "overwrite");
      StepSettings settings;
      settings.norm_tolerance = kBf16NormTolerance;
      settings.accumulate = accumulate;
      settings.bitwise_repeatable = true;
      EXPECT_TRUE(cuda_matches_cpu(context(), layer, kBf16Tolerance, settings));
    }
  }
}

// Deterministic BF16 choices are the same on every construction (heuristics, not timings), and
// BF16 problems are cached apart from F32's: an F32 layer of the same problem built on the same
// LayerCache keeps its own choices.
TEST_F(ConvBf16Cuda, DeterministicChoicesRepeatAndStayApartFromF32) {
  const Conv2dSpec spec = conv(32, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true);
  const Shape input{8, 16, 28, 28};
  for (const Layouts& layouts : {kLayouts[0], kLayouts[1]}) {
    SCOPED_TRACE(layouts.name);
    layers::LayerCache cache;
    LayerOptions bf16_options = bf16(options(), layouts);
    layers::cuda::Conv2dCuda first(spec, {input}, bf16_options);
    bf16_options.cache = &cache;
    layers::cuda::Conv2dCuda cached(spec, {input}, bf16_options);
    EXPECT_EQ(first.algorithms(), cached.algorithms());
    LayerOptions f32_options = options();
    f32_options.deterministic = true;
    f32_options.input_layout = layouts.input;
    f32_options.layout = layouts.output;
    f32_options.cache = &cache;
    layers::cuda::Conv2dCuda f32_cached(spec, {input}, f32_options);
    EXPECT_EQ(cache.size(), 2u) << "one entry per dtype";
    f32_options.cache = nullptr;
    layers::cuda::Conv2dCuda f32(spec, {input}, f32_options);
    EXPECT_EQ(f32_cached.algorithms(), f32.algorithms());
    EXPECT_TRUE(cuda_matches_cpu(context(), cached, kBf16Tolerance));
  }
}

// Every pass that reads the weight stages a bf16 copy; backward also the bf16 weight gradient (and
// for a bias in NCHW the sums' scratch): whatever algorithm a limit picks, those bytes are in.
TEST_F(ConvBf16Cuda, WorkspaceCountsTheBf16WeightCopies) {
  const Conv2dSpec spec = conv(64, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true);
  const Shape input{4, 32, 14, 14};
  const std::size_t weight =
      runtime::MemoryResource::align_up(Shape{64, 32, 3, 3}.bytes(DType::BF16));
  for (const Layouts& layouts : kLayouts) {
    SCOPED_TRACE(layouts.name);
    layers::cuda::Conv2dCuda layer(spec, {input}, bf16(options(), layouts));
    const std::size_t input_copy =
        layouts.input == layouts.output
            ? 0
            : runtime::MemoryResource::align_up(input.bytes(DType::BF16));
    for (const bool backward : {false, true}) {
      for (const layers::WorkspaceOption& o : layer.workspace_options(backward)) {
        EXPECT_GE(o.workspace, (backward ? 2 * weight : weight) + input_copy);
      }
    }
    layer.limit_workspace({0, 0});
    EXPECT_GE(layer.workspace().forward, weight + input_copy);
    EXPECT_GE(layer.workspace().backward, 2 * weight + input_copy);
    // A convolution that converts its input's layout reads the network input: no input gradient.
    StepSettings settings;
    settings.input_grads = layouts.input == layouts.output;
    EXPECT_TRUE(cuda_matches_cpu(context(), layer, kBf16Tolerance, settings));
  }
}

// ---- The staging kernels against host arithmetic ------------------------------------------------

std::vector<float> host_values(std::int64_t n, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) {
    // Values of several binades, most not representable in bf16.
    const auto k = static_cast<double>((i * 2654435761u + seed * 40503u) % 10007u);
    v[i] = static_cast<float>((k / 10007.0 - 0.5) * std::pow(2.0, static_cast<double>(i % 7)));
  }
  return v;
}

// Index of NCHW-logical element (n, c, p) of a [N, C, P] tensor stored in `layout`.
std::size_t stored_at(Layout layout, std::int64_t n, std::int64_t c, std::int64_t p,
                      std::int64_t channels, std::int64_t plane) {
  return static_cast<std::size_t>(layout == Layout::Nhwc ? (n * plane + p) * channels + c
                                                         : (n * channels + c) * plane + p);
}

template <typename T>
std::vector<T> download(cudaStream_t stream, const layers::cuda::DeviceBuffer& buffer,
                        std::size_t n) {
  std::vector<T> host(n);
  VDNN_CHECK_CUDA(cudaMemcpyAsync(host.data(), buffer.as<void>(), n * sizeof(T),
                                  cudaMemcpyDeviceToHost, stream));
  VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
  return host;
}

template <typename T>
void upload(cudaStream_t stream, const std::vector<T>& host, layers::cuda::DeviceBuffer& buffer) {
  VDNN_CHECK_CUDA(cudaMemcpyAsync(buffer.as<void>(), host.data(), host.size() * sizeof(T),
                                  cudaMemcpyHostToDevice, stream));
  VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
}

// F32 KCRS -> bf16 KRSC (the forward's weight copy), then bf16 KRSC -> F32 KCRS added to what is
// there (a later batch chunk's weight gradient), and the same within one layout: exact against
// the host's rounding.
TEST_F(ConvBf16Cuda, ConversionsRoundOnceAndMoveTheChannel) {
  const cudaStream_t stream = context().compute_stream();
  const std::int64_t plane = 9;
  // 270 elements: one a thread; 216: eight a thread where the order stays (one layout).
  for (const Shape& shape : {Shape{5, 6, 3, 3}, Shape{4, 6, 3, 3}}) {
    const auto n = static_cast<std::size_t>(shape.numel());
    for (const Layout from : {Layout::Nchw, Layout::Nhwc}) {
      for (const Layout to : {Layout::Nchw, Layout::Nhwc}) {
        SCOPED_TRACE(std::string(runtime::layout_name(from)) + " -> " + runtime::layout_name(to));
        const std::vector<float> master = host_values(shape.numel(), 1);
        const std::vector<float> before = host_values(shape.numel(), 2);
        layers::cuda::DeviceBuffer f32(n * sizeof(float));
        layers::cuda::DeviceBuffer b16(n * sizeof(__nv_bfloat16));
        layers::cuda::DeviceBuffer sum(n * sizeof(float));
        upload(stream, master, f32);
        upload(stream, before, sum);
        layers::cuda::convert_layout(stream, f32.as<float>(), from, b16.as<__nv_bfloat16>(), to,
                                     shape);
        layers::cuda::convert_layout(stream, b16.as<__nv_bfloat16>(), to, sum.as<float>(), from,
                                     shape, /*accumulate=*/true);
        const std::vector<runtime::BFloat16> copy = download<runtime::BFloat16>(stream, b16, n);
        const std::vector<float> added = download<float>(stream, sum, n);
        for (std::int64_t k = 0; k < shape[0]; ++k) {
          for (std::int64_t c = 0; c < shape[1]; ++c) {
            for (std::int64_t p = 0; p < plane; ++p) {
              const std::size_t i = stored_at(from, k, c, p, shape[1], plane);
              const std::size_t j = stored_at(to, k, c, p, shape[1], plane);
              const runtime::BFloat16 expected = runtime::to_bfloat16(master[i]);
              ASSERT_EQ(copy[j].bits, expected.bits) << "element " << i;
              ASSERT_EQ(added[i], before[i] + runtime::to_float(expected)) << "element " << i;
            }
          }
        }
      }
    }
  }
}

// The bias gradient's sums of bf16 elements in both layouts, with channels that are not whole
// vectors (37) and that are (64, read 8 at a time in NHWC): accumulated in double from exact bf16
// values, so the F32 result is the host's double sum rounded once (up to the sum's order).
TEST_F(ConvBf16Cuda, ChannelSumsOfBf16MatchHostSums) {
  const cudaStream_t stream = context().compute_stream();
  const std::int64_t batch = 7;
  const std::int64_t plane = 45;
  for (const std::int64_t channels : {37, 64}) {
    const auto n = static_cast<std::size_t>(batch * channels * plane);
    std::vector<runtime::BFloat16> values(n);
    const std::vector<float> raw = host_values(static_cast<std::int64_t>(n), 3);
    for (std::size_t i = 0; i < n; ++i) values[i] = runtime::to_bfloat16(raw[i]);
    layers::cuda::DeviceBuffer x(n * sizeof(__nv_bfloat16));
    upload(stream, values, x);
    for (const Layout layout : {Layout::Nchw, Layout::Nhwc}) {
      SCOPED_TRACE(std::string(runtime::layout_name(layout)) + ", channels " +
                   std::to_string(channels));
      const layers::cuda::ChannelSums sums =
          layout == Layout::Nhwc ? layers::cuda::ChannelSums(batch * plane, channels)
                                 : layers::cuda::ChannelSums(batch, channels, plane);
      layers::cuda::DeviceBuffer scratch(sums.scratch_bytes());
      layers::cuda::DeviceBuffer out(static_cast<std::size_t>(channels) * sizeof(float));
      sums.sums(stream, x.as<__nv_bfloat16>(), scratch.as<void>(), out.as<float>());
      const std::vector<float> got =
          download<float>(stream, out, static_cast<std::size_t>(channels));
      // Bitwise repeatable.
      sums.sums(stream, x.as<__nv_bfloat16>(), scratch.as<void>(), out.as<float>());
      EXPECT_EQ(download<float>(stream, out, static_cast<std::size_t>(channels)), got);
      for (std::int64_t c = 0; c < channels; ++c) {
        double expected = 0.0;
        for (std::int64_t b = 0; b < batch; ++b) {
          for (std::int64_t p = 0; p < plane; ++p) {
            expected += runtime::to_float(values[stored_at(layout, b, c, p, channels, plane)]);
          }
        }
        EXPECT_NEAR(got[static_cast<std::size_t>(c)], expected,
                    1e-6 * std::max(1.0, std::abs(expected)))
            << "channel " << c;
      }
    }
  }
}

// masked_sums (the fused ReLU's mask and the bias gradient in one pass) against
// relu_mask_in_place followed by sums, bitwise in the gradient and the sums, in both types and
// layouts, with and without whole vectors; a NaN in the ReLU output masks as it does there.
template <typename T>
T stored_as(float value) {
  if constexpr (std::is_same_v<T, float>) {
    return value;
  } else {
    return runtime::to_bfloat16(value);
  }
}

template <typename T, typename Device>
void expect_masked_sums_as_two_passes(cudaStream_t stream, std::int64_t channels, Layout layout) {
  const std::int64_t batch = 5;
  const std::int64_t plane = 36;
  const auto n = static_cast<std::size_t>(batch * channels * plane);
  const std::vector<float> y_raw = host_values(static_cast<std::int64_t>(n), 4);
  const std::vector<float> g_raw = host_values(static_cast<std::int64_t>(n), 5);
  std::vector<T> y(n);
  std::vector<T> g(n);
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = stored_as<T>(i % 11 == 0 ? std::nanf("") : y_raw[i]);
    g[i] = stored_as<T>(g_raw[i]);
  }
  layers::cuda::DeviceBuffer y_dev(n * sizeof(T));
  layers::cuda::DeviceBuffer fused(n * sizeof(T));
  layers::cuda::DeviceBuffer apart(n * sizeof(T));
  upload(stream, y, y_dev);
  upload(stream, g, fused);
  upload(stream, g, apart);
  const layers::cuda::ChannelSums sums = layout == Layout::Nhwc
                                             ? layers::cuda::ChannelSums(batch * plane, channels)
                                             : layers::cuda::ChannelSums(batch, channels, plane);
  layers::cuda::DeviceBuffer scratch(sums.scratch_bytes());
  const auto c = static_cast<std::size_t>(channels);
  layers::cuda::DeviceBuffer fused_sums(c * sizeof(float));
  layers::cuda::DeviceBuffer apart_sums(c * sizeof(float));
  sums.masked_sums(stream, y_dev.as<Device>(), fused.as<Device>(), scratch.as<void>(),
                   fused_sums.as<float>());
  layers::cuda::relu_mask_in_place(stream, y_dev.as<T>(), apart.as<T>(),
                                   static_cast<std::int64_t>(n));
  sums.sums(stream, apart.as<Device>(), scratch.as<void>(), apart_sums.as<float>());
  const std::vector<T> fused_g = download<T>(stream, fused, n);
  const std::vector<T> apart_g = download<T>(stream, apart, n);
  EXPECT_EQ(std::memcmp(fused_g.data(), apart_g.data(), n * sizeof(T)), 0);
  EXPECT_EQ(download<float>(stream, fused_sums, c), download<float>(stream, apart_sums, c));
}

TEST_F(ConvBf16Cuda, MaskedSumsAreTheMaskThenTheSums) {
  const cudaStream_t stream = context().compute_stream();
  for (const Layout layout : {Layout::Nchw, Layout::Nhwc}) {
    for (const std::int64_t channels : {13, 64}) {
      SCOPED_TRACE(std::string(runtime::layout_name(layout)) + ", channels " +
                   std::to_string(channels));
      expect_masked_sums_as_two_passes<runtime::BFloat16, __nv_bfloat16>(stream, channels, layout);
      expect_masked_sums_as_two_passes<float, float>(stream, channels, layout);
    }
  }
}

// Needs no device: the options are checked before any CUDA call.
TEST(ConvBf16CudaOptions, Bf16WithoutContextIsRefused) {
  LayerOptions o;
  o.dtype = DType::BF16;
  EXPECT_THROW(layers::cuda::Conv2dCuda(conv(4, {3, 3}), {Shape{1, 2, 5, 5}}, o),
               runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::test
