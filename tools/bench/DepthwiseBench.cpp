// bench_depthwise: our channels-last depthwise convolution (DepthwiseConv2dCuda) against cuDNN's
// (Conv2dCuda, its engines measured at construction as a training run measures them, TF32
// allowed) on the zoo's depthwise shapes, F32 and BF16, in the same run: the best of kRepeats
// forward and backward passes each, timed with CUDA events, and cuDNN's time over ours (Note
// [Depthwise convolution]). Prints one JSON object per line.
// Usage: bench_depthwise [fp32|bf16|NETWORK ...]: only those precisions and networks (default all).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "layers/LayerSpec.hpp"
#include "layers/cuda/Conv2dCuda.hpp"
#include "layers/cuda/DepthwiseConv2dCuda.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CudaEvent.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace {

using vdnn::layers::Conv2dSpec;
using vdnn::layers::Layer;
using vdnn::layers::LayerOptions;
using vdnn::runtime::DType;
using vdnn::runtime::Layout;
using vdnn::runtime::Shape;
using vdnn::runtime::TensorView;
using vdnn::runtime::cuda::CudaEvent;
using vdnn::runtime::cuda::EventTiming;

constexpr int kWarmup = 2;
constexpr int kRepeats = 10;

// One depthwise layer of a zoo network at its benchmark batch.
struct Case {
  const char* network;
  std::int64_t batch, channels, size, kernel, stride;
};

constexpr Case kCases[] = {
    {"convnext_tiny", 64, 96, 56, 7, 1},     {"convnext_tiny", 64, 192, 28, 7, 1},
    {"convnext_tiny", 64, 384, 14, 7, 1},    {"convnext_tiny", 64, 768, 7, 7, 1},
    {"convnext_base", 637, 128, 56, 7, 1},   {"convnext_base", 637, 512, 14, 7, 1},
    {"mobilenet_v2", 256, 32, 112, 3, 1},    {"mobilenet_v2", 256, 96, 112, 3, 2},
    {"mobilenet_v2", 256, 144, 56, 3, 1},    {"mobilenet_v2", 256, 144, 56, 3, 2},
    {"mobilenet_v2", 256, 192, 28, 3, 1},    {"mobilenet_v2", 256, 384, 14, 3, 1},
    {"mobilenet_v2", 256, 576, 14, 3, 2},    {"mobilenet_v2", 256, 960, 7, 3, 1},
    {"efficientnet_b0", 128, 144, 56, 5, 2}, {"efficientnet_b0", 128, 240, 28, 5, 1},
    {"efficientnet_b0", 128, 480, 14, 5, 1}, {"efficientnet_b0", 128, 672, 14, 5, 2},
    {"efficientnet_b0", 128, 1152, 7, 5, 1}, {"efficientnet_b0", 128, 240, 28, 3, 2},
};

struct DeviceFree {
  void operator()(void* p) const noexcept { cudaFree(p); }
};
using DeviceMemory = std::unique_ptr<void, DeviceFree>;

DeviceMemory zeroed(std::size_t bytes) {
  void* p = nullptr;
  VDNN_CHECK_CUDA(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)));
  VDNN_CHECK_CUDA(cudaMemset(p, 0, bytes));
  return DeviceMemory(p);
}

TensorView view(void* data, const Shape& shape, DType dtype, Layout layout) {
  TensorView v;
  v.data = data;
  v.shape = shape;
  v.dtype = dtype;
  v.layout = layout;
  return v;
}

// Best milliseconds of kRepeats runs of `pass` on the layer's stream.
template <typename Pass>
double best_ms(cudaStream_t stream, Pass&& pass) {
  for (int i = 0; i < kWarmup; ++i) pass();
  double best = 1e30;
  for (int i = 0; i < kRepeats; ++i) {
    CudaEvent start(EventTiming::kEnabled);
    CudaEvent end(EventTiming::kEnabled);
    start.record(stream);
    pass();
    end.record(stream);
    end.synchronize();
    best = std::min(best, static_cast<double>(vdnn::runtime::cuda::elapsed_ms(start, end)));
  }
  return best;
}

struct Times {
  double forward_ms = 0.0;
  double backward_ms = 0.0;
};

// One forward and one backward (input, weight and bias gradients) of `layer` on zeroed memory.
Times time_layer(vdnn::runtime::cuda::DeviceContext& context, Layer& layer, const Case& c,
                 DType dtype) {
  const Shape x_shape{c.batch, c.channels, c.size, c.size};
  const Shape& y_shape = layer.output_shape();
  const Shape w_shape{c.channels, 1, c.kernel, c.kernel};
  const Shape b_shape{c.channels};
  const DType w_dtype = dtype;  // BF16: the executor's bf16 weight copy
  DeviceMemory x = zeroed(x_shape.bytes(dtype));
  DeviceMemory y = zeroed(y_shape.bytes(dtype));
  DeviceMemory dy = zeroed(y_shape.bytes(dtype));
  DeviceMemory dx = zeroed(x_shape.bytes(dtype));
  DeviceMemory w = zeroed(w_shape.bytes(w_dtype));
  DeviceMemory b = zeroed(b_shape.bytes(DType::F32));
  DeviceMemory dw = zeroed(w_shape.bytes(DType::F32));
  DeviceMemory db = zeroed(b_shape.bytes(DType::F32));
  DeviceMemory workspace = zeroed(layer.workspace_bytes());
  const std::vector<TensorView> params{view(w.get(), w_shape, w_dtype, Layout::Nhwc),
                                       view(b.get(), b_shape, DType::F32, Layout::Nchw)};
  vdnn::layers::ForwardArgs f;
  f.inputs = {view(x.get(), x_shape, dtype, Layout::Nhwc)};
  f.params = params;
  f.output = view(y.get(), y_shape, dtype, Layout::Nhwc);
  if (layer.workspace().forward > 0) {
    f.workspace = view(workspace.get(), Shape{static_cast<std::int64_t>(layer.workspace().forward)},
                       DType::U8, Layout::Nchw);
  }
  vdnn::layers::BackwardArgs b_args;
  b_args.inputs = f.inputs;
  b_args.grad_output = view(dy.get(), y_shape, dtype, Layout::Nhwc);
  b_args.grad_inputs = {{view(dx.get(), x_shape, dtype, Layout::Nhwc), false}};
  b_args.params = params;
  b_args.grad_params = {view(dw.get(), w_shape, DType::F32, Layout::Nhwc),
                        view(db.get(), b_shape, DType::F32, Layout::Nchw)};
  if (layer.workspace().backward > 0) {
    b_args.workspace =
        view(workspace.get(), Shape{static_cast<std::int64_t>(layer.workspace().backward)},
             DType::U8, Layout::Nchw);
  }
  const cudaStream_t stream = context.compute_stream();
  Times t;
  t.forward_ms = best_ms(stream, [&] { layer.forward(f); });
  t.backward_ms = best_ms(stream, [&] { layer.backward(b_args); });
  return t;
}

}  // namespace

// Whether the arguments select `word` from `all`: none of `all` named, or `word` named.
bool selected(const std::vector<std::string>& args, const std::vector<std::string>& all,
              const std::string& word) {
  const auto named = [&](const std::string& w) {
    return std::find(args.begin(), args.end(), w) != args.end();
  };
  return std::none_of(all.begin(), all.end(), named) || named(word);
}

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> networks;
  for (const Case& c : kCases) networks.emplace_back(c.network);
  vdnn::runtime::cuda::DeviceContext context(0);
  for (const DType dtype : {DType::F32, DType::BF16}) {
    if (!selected(args, {"fp32", "bf16"}, dtype == DType::F32 ? "fp32" : "bf16")) continue;
    for (const Case& c : kCases) {
      if (!selected(args, networks, c.network)) continue;
      LayerOptions options;
      options.cuda = &context;
      options.dtype = dtype;
      options.layout = Layout::Nhwc;
      options.input_layout = Layout::Nhwc;
      options.bf16_weight_copies = true;
      const Conv2dSpec spec{c.channels,
                            {c.kernel, c.kernel},
                            {c.stride, c.stride},
                            {c.kernel / 2, c.kernel / 2},
                            {1, 1},
                            c.channels,
                            true};
      const Shape input{c.batch, c.channels, c.size, c.size};
      vdnn::layers::cuda::Conv2dCuda cudnn(spec, {input}, options);
      vdnn::layers::cuda::DepthwiseConv2dCuda ours(spec, {input}, options);
      const Times theirs = time_layer(context, cudnn, c, dtype);
      const Times mine = time_layer(context, ours, c, dtype);
      std::printf(
          "{\"network\": \"%s\", \"dtype\": \"%s\", \"batch\": %lld, \"channels\": %lld, "
          "\"size\": %lld, \"kernel\": %lld, \"stride\": %lld, \"cudnn_forward_ms\": %.4f, "
          "\"ours_forward_ms\": %.4f, \"forward_speedup\": %.2f, \"cudnn_backward_ms\": %.4f, "
          "\"ours_backward_ms\": %.4f, \"backward_speedup\": %.2f, \"cudnn_algorithms\": \"%s\"}\n",
          c.network, dtype == DType::F32 ? "fp32" : "bf16", static_cast<long long>(c.batch),
          static_cast<long long>(c.channels), static_cast<long long>(c.size),
          static_cast<long long>(c.kernel), static_cast<long long>(c.stride), theirs.forward_ms,
          mine.forward_ms, theirs.forward_ms / mine.forward_ms, theirs.backward_ms,
          mine.backward_ms, theirs.backward_ms / mine.backward_ms, cudnn.algorithms().c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
