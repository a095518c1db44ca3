// CUDA max pooling in NCHW or NHWC: forward by cuDNN's deterministic max pooling in NCHW, by an own
// kernel in NHWC with C % 4 == 0 (four channels per thread, float4 loads) and in ceil mode, whose
// output extents cuDNN cannot produce; backward as a gather that re-finds each covering window's
// arg-max in the input, since the output is not kept for backward. For the square stride-2 windows
// of ResNet, VGG and GoogLeNet one thread gathers a 2 x 2 cell of input elements (of four channels
// in NHWC with C % 4 == 0) and finds each window's arg-max once for the cell instead of once per
// element. In BF16 the own kernels do all of it (cuDNN is not asked): max pooling only compares
// and copies, so it is exact, and the gradient sums run in float.
#include "layers/cuda/MaxPool2dCuda.hpp"

#include <cstdint>
#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/CudnnPooling.hpp"
#include "layers/cuda/Elements.cuh"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// Per lane (of kVec adjacent channels; `plane` in vectors), the pixel of the first maximum under
// the window, row-major, and its value; a NaN beats every number so that the gradient follows the
// NaN that forward propagated (the MaxPool2dCpu rule). T is float or __nv_bfloat16.
template <Layout L, int kVec, typename T>
__device__ void window_argmax(const T* x, PlaneOffsets<L> plane, int width, IndexRange rows,
                              IndexRange cols, int (&best)[kVec], float (&best_value)[kVec]) {
  const int first = rows.begin * width + cols.begin;
  load_vec<kVec>(x, plane[first], best_value);
#pragma unroll
  for (int k = 0; k < kVec; ++k) best[k] = first;
  for (int ih = rows.begin; ih < rows.end; ++ih) {
    for (int iw = cols.begin; iw < cols.end; ++iw) {
      const int pixel = ih * width + iw;
      float value[kVec];
      load_vec<kVec>(x, plane[pixel], value);
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        if (value[k] > best_value[k] || (value[k] != value[k] && best_value[k] == best_value[k])) {
          best[k] = pixel;
          best_value[k] = value[k];
        }
      }
    }
  }
}

// window_argmax of one channel.
template <Layout L, typename T>
__device__ int window_argmax(const T* x, PlaneOffsets<L> plane, int width, IndexRange rows,
                             IndexRange cols) {
  int best[1];
  float best_value[1];
  window_argmax<L, 1>(x, plane, width, rows, cols, best, best_value);
  return best[0];
}

// A window passes its gradient to its arg-max only.
template <Layout L, typename T>
struct ArgmaxShare {
  int in_w;
  const T* x;
  __device__ float operator()(PlaneOffsets<L> x_plane, int pixel, IndexRange rows, IndexRange cols,
                              float dy) const {
    return window_argmax(x, x_plane, in_w, rows, cols) == pixel ? dy : 0.0f;
  }
};

// cuDNN pools in floor mode only; ceil mode that adds a window needs the own kernel.
bool cudnn_can_pool(MaxPool2dSpec spec, const Shape& input, const Shape& output) {
  spec.ceil_mode = false;
  return infer_output_shape(spec, {input}) == output;
}

__device__ int thread_index() { return static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); }

// One thread per output vector (w's channels count vectors of kVec channels); the windows are
// clipped to the input, so the extra last window of ceil mode reads only input pixels.
template <Layout L, int kVec, typename T>
__global__ void max_pool_forward(PoolWindow w, const T* __restrict__ x, T* __restrict__ y) {
  const int index = thread_index();
  if (index >= w.planes() * w.out_plane()) return;
  const PlanePixel at = w.outputs<L>().locate(index);
  const PlaneOffsets<L> x_plane = w.inputs<L>().plane(at.sample, at.channel);
  int best[kVec];
  float best_value[kVec];
  window_argmax<L, kVec>(x, x_plane, w.in_w, w.rows_under(at.pixel / w.out_w),
                         w.cols_under(at.pixel % w.out_w), best, best_value);
  store_vec<kVec>(y, index, best_value);
}

// One thread per input element.
template <Layout L, typename T>
__global__ void max_pool_backward(PoolWindow w, const T* __restrict__ x, const T* __restrict__ dy,
                                  T* __restrict__ dx, bool accumulate) {
  const int index = thread_index();
  if (index >= w.planes() * w.in_plane()) return;
  gather_window_gradients<L>(w, index, dy, dx, accumulate, ArgmaxShare<L, T>{w.in_w, x});
}

// The stride x stride cells of input elements that max_pool_backward_cells gives a thread each:
// cell (ch, cw) holds input rows [ch * stride_h - pad_h, ... + stride_h) and the columns likewise,
// so window (oh, ow) starts in cell (oh, ow). (first_h, first_w) is the cell of input element
// (0, 0); rows x cols cells hold input elements, each element in exactly one.
struct Cells {
  int first_h, first_w, rows, cols;

  static Cells of(const PoolWindow& w) {
    const int first_h = w.pad_h / w.stride_h;
    const int first_w = w.pad_w / w.stride_w;
    return {first_h, first_w, (w.in_h - 1 + w.pad_h) / w.stride_h - first_h + 1,
            (w.in_w - 1 + w.pad_w) / w.stride_w - first_w + 1};
  }
};

__device__ bool inside(const PoolWindow& w, int ih, int iw) {
  return ih >= 0 && ih < w.in_h && iw >= 0 && iw < w.in_w;
}

// Backward for K x K windows at stride S, one thread per S x S cell (Cells) of kVec adjacent
// channels (w's channels count vectors), all in L: only the ceil(K / S)^2 windows that overlap a
// cell can have their arg-max in it, so the thread finds each of their arg-maxes once and adds the
// window's gradient to the element it names. Each element gets the sums of max_pool_backward (and
// of the CPU) in the same order: its starting value, then its windows in output order. Input
// elements are adjacent threads' in NHWC (coalesced) and S apart in NCHW.
template <Layout L, int K, int S, int kVec, typename T>
__global__ void max_pool_backward_cells(PoolWindow w, Cells cells, const T* __restrict__ x,
                                        const T* __restrict__ dy, T* __restrict__ dx,
                                        bool accumulate) {
  constexpr int kReach = (K + S - 1) / S;  // windows per axis that overlap a cell
  const PlaneLayout<L> cell_planes{w.channels, cells.rows * cells.cols};
  const int index = thread_index();
  if (index >= w.planes() * cell_planes.plane_size) return;
  const PlanePixel at = cell_planes.locate(index);
  const int cell_h = cells.first_h + at.pixel / cells.cols;
  const int cell_w = cells.first_w + at.pixel % cells.cols;
  const int row0 = cell_h * S - w.pad_h;
  const int col0 = cell_w * S - w.pad_w;
  const PlaneOffsets<L> x_plane = w.inputs<L>().plane(at.sample, at.channel);
  const PlaneOffsets<L> dy_plane = w.outputs<L>().plane(at.sample, at.channel);
  // Slots of cell elements outside the input may alias other pixels; they are never stored.
  float sum[S][S][kVec];
#pragma unroll
  for (int a = 0; a < S; ++a) {
#pragma unroll
    for (int b = 0; b < S; ++b) {
      const bool read = accumulate && inside(w, row0 + a, col0 + b);
      if (read) {
        float start[kVec];
        load_vec<kVec>(dx, x_plane[(row0 + a) * w.in_w + col0 + b], start);
#pragma unroll
        for (int k = 0; k < kVec; ++k) sum[a][b][k] = start[k];
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) sum[a][b][k] = 0.0f;
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kReach; ++i) {
    const int oh = cell_h - kReach + 1 + i;
    if (oh < 0 || oh >= w.out_h) continue;
    const IndexRange rows = w.rows_under(oh);
#pragma unroll
    for (int j = 0; j < kReach; ++j) {
      const int ow = cell_w - kReach + 1 + j;
      if (ow < 0 || ow >= w.out_w) continue;
      int best[kVec];
      float best_value[kVec];
      window_argmax<L, kVec>(x, x_plane, w.in_w, rows, w.cols_under(ow), best, best_value);
      float gradient[kVec];
      load_vec<kVec>(dy, dy_plane[oh * w.out_w + ow], gradient);
#pragma unroll
      for (int a = 0; a < S; ++a) {
#pragma unroll
        for (int b = 0; b < S; ++b) {
#pragma unroll
          for (int k = 0; k < kVec; ++k) {
            if (best[k] == (row0 + a) * w.in_w + col0 + b) sum[a][b][k] += gradient[k];
          }
        }
      }
    }
  }
#pragma unroll
  for (int a = 0; a < S; ++a) {
#pragma unroll
    for (int b = 0; b < S; ++b) {
      if (inside(w, row0 + a, col0 + b)) {
        store_vec<kVec>(dx, x_plane[(row0 + a) * w.in_w + col0 + b], sum[a][b]);
      }
    }
  }
}

// Whether an NHWC pass can take four channels per thread: C % 4 == 0 and 16-byte aligned tensors
// (float4; bf16 vectors need only 8 bytes).
bool four_channels(const PoolWindow& w, Layout layout, std::initializer_list<const void*> tensors) {
  return layout == Layout::Nhwc && w.channels % 4 == 0 && aligned16(tensors);
}

// w with its channels counted in vectors of four.
PoolWindow in_vectors(PoolWindow w) {
  w.channels /= 4;
  return w;
}

// Enqueues the backward in L: per cell for 2 x 2 and 3 x 3 windows at stride 2 (four channels per
// thread when four_channels), else per element.
template <Layout L, typename T>
void launch_backward(cudaStream_t stream, const PoolWindow& w, const T* x, const T* dy, T* dx,
                     bool accumulate) {
  const bool square_stride2 = w.stride_h == 2 && w.stride_w == 2 && w.kernel_h == w.kernel_w;
  if (square_stride2 && (w.kernel_h == 2 || w.kernel_h == 3)) {
    const Cells cells = Cells::of(w);
    const bool vec4 = four_channels(w, L, {x, dy, dx});
    const PoolWindow run = vec4 ? in_vectors(w) : w;
    const auto kernel = vec4 ? (w.kernel_h == 2 ? max_pool_backward_cells<L, 2, 2, 4, T>
                                                : max_pool_backward_cells<L, 3, 2, 4, T>)
                             : (w.kernel_h == 2 ? max_pool_backward_cells<L, 2, 2, 1, T>
                                                : max_pool_backward_cells<L, 3, 2, 1, T>);
    kernel<<<blocks_for(static_cast<std::int64_t>(run.planes()) * cells.rows * cells.cols),
             kBlockThreads, 0, stream>>>(run, cells, x, dy, dx, accumulate);
  } else {
    max_pool_backward<L, T><<<blocks_for(static_cast<std::int64_t>(w.planes()) * w.in_plane()),
                              kBlockThreads, 0, stream>>>(w, x, dy, dx, accumulate);
  }
  VDNN_CHECK_LAUNCH();
}

}  // namespace

MaxPool2dCuda::MaxPool2dCuda(const MaxPool2dSpec& spec, std::vector<Shape> input_shapes,
                             const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      context_(&checked_context(options, "MaxPool2dCuda", Precisions::F32OrBf16)),
      window_(PoolWindow::make(spec.kernel, spec.stride, spec.padding, this->input_shapes()[0],
                               output_shape(), layout())),
      pooling_(options.dtype == DType::F32 &&
                       cudnn_can_pool(spec, this->input_shapes()[0], output_shape())
                   ? std::make_unique<CudnnPooling>(CUDNN_POOLING_MAX_DETERMINISTIC, window_,
                                                    this->input_shapes()[0], output_shape(),
                                                    layout())
                   : nullptr) {}

MaxPool2dCuda::~MaxPool2dCuda() = default;

void MaxPool2dCuda::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 &&
                   view_matches(args.inputs[0], input_shapes()[0], dtype()) &&
                   view_matches(args.output, output_shape(), dtype()),
               "MaxPool2dCuda::forward: views do not match the layer's shapes");
  with_element_type(dtype(), [&](auto element) {
    using T = DeviceElementOf<decltype(element)>;
    const T* x = device_data<T>(args.inputs[0]);
    T* y = device_data<T>(args.output);
    const cudaStream_t stream = context_->compute_stream();
    if (four_channels(window_, layout(), {x, y})) {
      max_pool_forward<Layout::Nhwc, 4>
          <<<blocks_for(args.output.numel() / 4), kBlockThreads, 0, stream>>>(in_vectors(window_),
                                                                              x, y);
    } else if (pooling_) {
      pooling_->forward(context_->cudnn(), x, y);
      return;
    } else {
      with_layout(layout(), [&](auto tag) {
        max_pool_forward<decltype(tag)::value, 1>
            <<<blocks_for(args.output.numel()), kBlockThreads, 0, stream>>>(window_, x, y);
      });
    }
    VDNN_CHECK_LAUNCH();
  });
}

void MaxPool2dCuda::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && args.grad_inputs.size() == 1 &&
                   view_matches(args.inputs[0], input_shapes()[0], dtype()) &&
                   view_matches(args.grad_output, output_shape(), dtype()),
               "MaxPool2dCuda::backward: views do not match the layer's shapes");
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  VDNN_EXPECTS(view_matches(target.tensor, input_shapes()[0], dtype()),
               "MaxPool2dCuda::backward: input gradient view does not match the input shape");
  with_element_type(dtype(), [&](auto element) {
    using T = DeviceElementOf<decltype(element)>;
    with_layout(layout(), [&](auto tag) {
      launch_backward<decltype(tag)::value>(
          context_->compute_stream(), window_, device_data<T>(args.inputs[0]),
          device_data<T>(args.grad_output), device_data<T>(target.tensor), target.accumulate);
    });
  });
}

}  // namespace vdnn::layers::cuda
