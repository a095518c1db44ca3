// Row-strided views on the CUDA backend (Note [Dense block storage]), NCHW and NHWC, F32 and BF16:
// the batch norms (batchnorm2d, batchnorm2d_relu with and without the residual, batchnorm2d_silu)
// reading x as a channel prefix of a wider map whose other channels are NaN, bit for bit as on a
// packed copy of x, in training, recompute and inference forwards and backward, alone and as the
// ranks of a synchronized batch norm; the refusal of a row stride the vector kernels cannot read
// and of a strided view given to a layer that reads none; and concat writing a row-strided output
// with its first input already in place (no work enqueued for it) and a row-strided input.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "layers/LayerTestSupport.hpp"
#include "layers/Registry.hpp"
#include "layers/cuda/CudaLayerTest.hpp"
#include "layers/cuda/DeviceData.hpp"
#include "layers/cuda/LayerRun.hpp"
#include "models/train/cuda/HostStagedCommunicator.hpp"
#include "runtime/BFloat16.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::test {
namespace {

using layers::BackwardArgs;
using layers::ForwardArgs;
using layers::GradTarget;
using layers::LayerOptions;
using layers::LayerSpec;
using runtime::DType;
using runtime::Layout;
using Floats = std::vector<float>;
using RowStridedViewsCuda = CudaLayerTest;
using Kind = BatchNormKind;

constexpr Layout kLayouts[] = {Layout::Nchw, Layout::Nhwc};
constexpr DType kDtypes[] = {DType::F32, DType::BF16};

// x's shape and the channels of the map it is a prefix of; rows and row strides are multiples of 8
// elements in both layouts, as the dense block storage's.
struct PrefixCase {
  Shape x;
  std::int64_t wide_channels;
};
const PrefixCase kPrefixCases[] = {
    {Shape::nchw(2, 8, 3, 3), 16},   // H * W odd: NCHW's 4-wide vectors cross planes
    {Shape::nchw(2, 16, 4, 4), 24},  // H * W % 8 == 0: bf16's 16-byte vectors in both layouts
    {Shape::nchw(4, 64, 8, 8), 96},  // several reduction blocks per channel and NHWC row tiles
};

std::string describe(Kind kind, const Shape& shape, Layout layout, DType dtype) {
  return std::string(layers::type_name(batch_norm_spec(kind))) + " " + shape.to_string() + " " +
         runtime::layout_name(layout) + " " + runtime::dtype_name(dtype);
}

LayerOptions with(LayerOptions options, Layout layout, DType dtype) {
  options.layout = layout;
  options.input_layout = layout;
  options.dtype = dtype;
  return options;
}

Shape wide_shape(const Shape& shape, std::int64_t wide) {
  return Shape::nchw(shape.n(), wide, shape.h(), shape.w());
}

// A device map of `wide` channels holding `x` (of `shape`) in its first channels and `fill` in the
// others, and x's view into it: the same data pointer, x's shape, the map's row pitch.
TensorView prefix_view(DeviceData& mem, const Floats& x, const Shape& shape, std::int64_t wide,
                       float fill, DType dtype) {
  TensorView view = mem.upload(widened(x, shape, wide, fill), wide_shape(shape, wide), dtype);
  view.row_stride = view.row_elements();
  view.shape = shape;
  return view;
}

// What every run of one case reads: the same values for the packed and the strided x.
struct Inputs {
  explicit Inputs(const Shape& shape)
      : x(uniform(shape.numel(), 1, 0.5f, 2.5f)),
        r(uniform(shape.numel(), 2)),
        dy(uniform(shape.numel(), 3)),
        weight(uniform(shape.c(), 4, -3.0f, 3.0f)),
        bias(uniform(shape.c(), 5)) {}
  Floats x, r, dy, weight, bias;
};

// Everything a layer's steps produced, as floats (bf16 values widened exactly).
struct Results {
  std::vector<Floats> tensors;
  std::vector<std::string> names;
  void add(const char* name, Floats values) {
    names.emplace_back(name);
    tensors.push_back(std::move(values));
  }
};

// A training forward, its recompute, a backward, then an inference forward and its backward, of a
// fresh `kind` layer on `options` (layout, dtype, context, group) reading x packed, or `strided`
// as a prefix of a map of c.wide_channels whose other channels are NaN.
Results run_steps(Kind kind, const PrefixCase& c, const Inputs& in, bool strided,
                  const LayerOptions& options) {
  const Shape& shape = c.x;
  const DType dtype = options.dtype;
  const bool residual = kind == Kind::AddRelu;
  const std::vector<Shape> shapes(residual ? 2 : 1, shape);
  const auto layer =
      layers::make_layer(layers::Backend::Cuda, batch_norm_spec(kind), shapes, options);
  DeviceData mem(options.cuda->compute_stream(), options.layout);
  const Shape channels{shape.c()};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ForwardArgs f;
  f.inputs = {strided ? prefix_view(mem, in.x, shape, c.wide_channels, nan, dtype)
                      : mem.upload(in.x, shape, dtype)};
  if (residual) f.inputs.push_back(mem.upload(in.r, shape, dtype));
  f.params = {mem.upload(in.weight, channels), mem.upload(in.bias, channels),
              mem.upload(Floats(channels.numel(), 0.0f), channels),
              mem.upload(Floats(channels.numel(), 1.0f), channels)};
  f.output = mem.nan(shape, dtype);
  BackwardArgs b;
  b.inputs = f.inputs;
  b.output = f.output;
  b.params = f.params;
  b.grad_output = mem.upload(in.dy, shape, dtype);
  b.grad_inputs = {GradTarget{mem.nan(shape, dtype), false}};
  if (residual) b.grad_inputs.push_back(GradTarget{mem.nan(shape, dtype), false});
  b.grad_params = {mem.nan(channels), mem.nan(channels)};
  b.workspace = mem.workspace(layer->workspace().backward);

  Results out;
  layer->forward(f);
  out.add("training y", mem.download(f.output));
  out.add("running mean", mem.download(f.params[2]));
  out.add("running var", mem.download(f.params[3]));
  f.recompute = true;
  layer->forward(f);
  out.add("recomputed y", mem.download(f.output));
  layer->backward(b);
  for (const GradTarget& target : b.grad_inputs)
    out.add("input gradient", mem.download(target.tensor));
  out.add("weight gradient", mem.download(b.grad_params[0]));
  out.add("bias gradient", mem.download(b.grad_params[1]));
  f.training = false;
  f.recompute = false;
  layer->forward(f);
  out.add("inference y", mem.download(f.output));
  layer->backward(b);
  out.add("inference input gradient", mem.download(b.grad_inputs[0].tensor));
  return out;
}

void expect_bitwise(const Results& got, const Results& want) {
  ASSERT_EQ(got.tensors.size(), want.tensors.size());
  for (std::size_t i = 0; i < want.tensors.size(); ++i) {
    ASSERT_EQ(got.tensors[i].size(), want.tensors[i].size()) << want.names[i];
    EXPECT_EQ(std::memcmp(got.tensors[i].data(), want.tensors[i].data(),
                          want.tensors[i].size() * sizeof(float)),
              0)
        << want.names[i] << " differs from the packed x's";
  }
}

TEST_F(RowStridedViewsCuda, BatchNormsReadAPrefixViewAsAPackedCopy) {
  for (const PrefixCase& c : kPrefixCases) {
    const Inputs in(c.x);
    for (const Layout layout : kLayouts) {
      for (const DType dtype : kDtypes) {
        for (const Kind kind : kBatchNormKinds) {
          SCOPED_TRACE(describe(kind, c.x, layout, dtype));
          const LayerOptions o = with(options(), layout, dtype);
          expect_bitwise(run_steps(kind, c, in, true, o), run_steps(kind, c, in, false, o));
        }
      }
    }
  }
}

// Each rank's steps on its own context of device 0, on its own thread, the batch norms
// synchronized through one host-staged group; every rank reads the same inputs. A rank's error
// fails the test (and the group), and then no results come back.
std::vector<Results> run_ranks(
    Kind kind, const PrefixCase& c, const Inputs& in, bool strided, const LayerOptions& base,
    std::vector<std::unique_ptr<runtime::cuda::DeviceContext>>& contexts) {
  const int ranks = static_cast<int>(contexts.size());
  std::vector<Results> results(contexts.size());
  const std::vector<std::string> errors =
      on_staged_ranks(ranks, [&](int r, HostStagedCommunicator& staged) {
        const auto at = static_cast<std::size_t>(r);
        LayerOptions options = base;
        options.cuda = contexts[at].get();
        options.batch_norm_group = &staged;
        results[at] = run_steps(kind, c, in, strided, options);
      });
  for (const std::string& error : errors) {
    if (error.empty()) continue;
    ADD_FAILURE() << error;
    return {};
  }
  return results;
}

TEST_F(RowStridedViewsCuda, SynchronizedBatchNormsReadAPrefixViewAsAPackedCopy) {
  std::vector<std::unique_ptr<runtime::cuda::DeviceContext>> contexts;
  for (int r = 0; r < 2; ++r) {
    contexts.push_back(std::make_unique<runtime::cuda::DeviceContext>(0));
  }
  const PrefixCase& c = kPrefixCases[1];
  const Inputs in(c.x);
  for (const Layout layout : kLayouts) {
    for (const Kind kind : {Kind::Plain, Kind::AddRelu}) {
      SCOPED_TRACE(describe(kind, c.x, layout, DType::F32));
      const LayerOptions o = with(options(), layout, DType::F32);
      const std::vector<Results> got = run_ranks(kind, c, in, true, o, contexts);
      const std::vector<Results> want = run_ranks(kind, c, in, false, o, contexts);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t r = 0; r < got.size(); ++r) expect_bitwise(got[r], want[r]);
    }
  }
}

TEST_F(RowStridedViewsCuda, BatchNormRefusesARowStrideItsVectorsCannotRead) {
  const Shape shape = Shape::nchw(2, 8, 3, 3);
  for (const Layout layout : kLayouts) {
    SCOPED_TRACE(runtime::layout_name(layout));
    const LayerOptions o = with(options(), layout, DType::F32);
    const auto layer =
        layers::make_layer(layers::Backend::Cuda, batch_norm_spec(Kind::Plain), {shape}, o);
    DeviceData mem(context().compute_stream(), layout);
    const Shape channels{shape.c()};
    ForwardArgs f;
    // 4 channels more: a row stride 4 elements (NHWC) or 36 (NCHW) past a row, not a multiple of 8.
    f.inputs = {prefix_view(mem, Floats(static_cast<std::size_t>(shape.numel()), 1.0f), shape,
                            shape.c() + 4, 0.0f, DType::F32)};
    f.params = {mem.upload(Floats(8, 1.0f), channels), mem.upload(Floats(8, 0.0f), channels),
                mem.upload(Floats(8, 0.0f), channels), mem.upload(Floats(8, 1.0f), channels)};
    f.output = mem.nan(shape);
    EXPECT_THROW(layer->forward(f), runtime::InvalidArgument);
  }
}

TEST_F(RowStridedViewsCuda, LayersThatReadNoStridedViewRefuseOne) {
  const Shape shape = Shape::nchw(2, 8, 4, 4);
  layers::MaxPool2dSpec spec;
  spec.kernel = {2, 2};
  spec.stride = {2, 2};
  const auto layer = layers::make_layer(layers::Backend::Cuda, spec, {shape}, options());
  DeviceData mem(context().compute_stream());
  ForwardArgs f;
  f.inputs = {prefix_view(mem, uniform(shape.numel(), 1), shape, 16, 0.0f, DType::F32)};
  f.output = mem.nan(layer->output_shape());
  EXPECT_THROW(layer->forward(f), runtime::InvalidArgument);
}

// The nodes the work `enqueue` puts on `stream` makes, captured, never run.
template <typename Enqueue>
std::size_t captured_nodes(cudaStream_t stream, Enqueue&& enqueue) {
  VDNN_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  enqueue();
  cudaGraph_t graph = nullptr;
  VDNN_CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  std::size_t nodes = 0;
  VDNN_CHECK_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
  VDNN_CHECK_CUDA(cudaGraphDestroy(graph));
  return nodes;
}

// concat(a, b) into a block buffer of `buffer_channels` that holds a in place: the output is the
// buffer itself (12 channels, packed: the block's last concatenation) or a row-strided view of it
// (24), b a row-strided view of another map. a enqueues nothing, the output is a's channels then
// b's, and the buffer's channels past them keep their values.
TEST_F(RowStridedViewsCuda, ConcatLeavesAnInPlaceInputAndCopiesAStridedOne) {
  const Shape a_shape = Shape::nchw(2, 8, 3, 3);
  const Shape b_shape = Shape::nchw(2, 4, 3, 3);
  const Shape out_shape = Shape::nchw(2, 12, 3, 3);
  constexpr float kUntouched = 5.0f;
  const Floats a = uniform(a_shape.numel(), 1);
  const Floats b = uniform(b_shape.numel(), 2);
  for (const std::int64_t buffer_channels : {out_shape.c(), 2 * out_shape.c()}) {
    for (const Layout layout : kLayouts) {
      for (const DType dtype : kDtypes) {
        SCOPED_TRACE(std::to_string(buffer_channels) + " channels " + runtime::layout_name(layout) +
                     " " + runtime::dtype_name(dtype));
        const LayerOptions o = with(options(), layout, dtype);
        const auto layer =
            layers::make_layer(layers::Backend::Cuda, layers::ConcatSpec{}, {a_shape, b_shape}, o);
        DeviceData mem(context().compute_stream(), layout);
        const TensorView a_view = prefix_view(mem, a, a_shape, buffer_channels, kUntouched, dtype);
        TensorView buffer = a_view;
        buffer.shape = wide_shape(a_shape, buffer_channels);
        buffer.row_stride = 0;
        TensorView output = a_view;
        output.shape = out_shape;
        if (buffer_channels == out_shape.c()) output = buffer;
        ForwardArgs f;
        f.inputs = {a_view, prefix_view(mem, b, b_shape, 2 * b_shape.c(),
                                        std::numeric_limits<float>::quiet_NaN(), dtype)};
        f.output = output;
        EXPECT_EQ(captured_nodes(context().compute_stream(), [&] { layer->forward(f); }), 1U)
            << "work enqueued for the input in place";
        layer->forward(f);
        Floats want = widened(a, a_shape, buffer_channels, kUntouched);
        const std::int64_t plane = a_shape.h() * a_shape.w();
        for (std::int64_t n = 0; n < b_shape.n(); ++n) {
          std::copy_n(b.begin() + n * b_shape.sample_numel(), b_shape.sample_numel(),
                      want.begin() + (n * buffer_channels + a_shape.c()) * plane);
        }
        if (dtype == DType::BF16) {
          for (float& v : want) v = runtime::round_to_bfloat16(v);
        }
        EXPECT_TRUE(all_near(mem.download(buffer), want, 0.0));
      }
    }
  }
}

}  // namespace
}  // namespace vdnn::test
