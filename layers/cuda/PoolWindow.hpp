// PoolWindow: the geometry of 2-D pooling as plain ints, and where its planes lie in NCHW or NHWC
// memory, shared by the host code (cuDNN descriptors, launches) and the device code (the own
// kernels) of the CUDA pooling layers.
#pragma once

#include <type_traits>

#include "layers/LayerSpec.hpp"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "runtime/Shape.hpp"

#ifdef __CUDACC__
#define VDNN_HOST_DEVICE __host__ __device__
#else
#define VDNN_HOST_DEVICE
#endif

namespace vdnn::layers::cuda {

using runtime::Layout;

/// A layout as a type, so that a runtime layout can pick a kernel template (with_layout).
template <Layout L>
using LayoutTag = std::integral_constant<Layout, L>;

/// Calls fn(LayoutTag<layout>{}).
template <typename Fn>
void with_layout(Layout layout, Fn&& fn) {
  if (layout == Layout::Nhwc) {
    fn(LayoutTag<Layout::Nhwc>{});
  } else {
    fn(LayoutTag<Layout::Nchw>{});
  }
}

/// A half-open index range [begin, end); empty when end <= begin.
struct IndexRange {
  int begin = 0;
  int end = 0;
};

/// A (sample, channel) plane of a tensor and one pixel of it (row-major over H, W).
struct PlanePixel {
  int sample = 0;
  int channel = 0;
  int pixel = 0;
};

/// The offsets of the pixels of one plane of a tensor stored in L: adjacent in NCHW, `channels`
/// apart in NHWC.
template <Layout L>
struct PlaneOffsets {
  int origin = 0;
  int channels = 0;
  VDNN_HOST_DEVICE int operator[](int pixel) const {
    if constexpr (L == Layout::Nhwc) {
      return origin + pixel * channels;
    } else {
      return origin + pixel;
    }
  }
};

/// The addressing of a tensor of samples x `channels` planes of `plane_size` pixels stored in L.
/// In NCHW the samples fold into the channels (the memory of [N, C, H, W] is that of [1, N * C, H,
/// W]), so `channels` counts every plane there and locate() divides once, as a plain NCHW kernel.
/// Every element index fits an int (PoolWindow::make checks).
template <Layout L>
struct PlaneLayout {
  int channels = 0;
  int plane_size = 0;

  /// The plane and pixel of the element at memory index `index`.
  VDNN_HOST_DEVICE PlanePixel locate(int index) const {
    if constexpr (L == Layout::Nhwc) {
      const int rest = index / channels;  // sample * plane_size + pixel
      const int sample = rest / plane_size;
      return {sample, index - rest * channels, rest - sample * plane_size};
    } else {
      const int plane = index / plane_size;
      return {0, plane, index - plane * plane_size};
    }
  }
  /// Where the pixels of plane (sample, channel) lie.
  VDNN_HOST_DEVICE PlaneOffsets<L> plane(int sample, int channel) const {
    if constexpr (L == Layout::Nhwc) {
      return {sample * plane_size * channels + channel, channels};
    } else {
      return {(sample * channels + channel) * plane_size, channels};
    }
  }
};

/// One pooling window sliding over the planes of an input tensor. A value type; every element
/// index of the input and output fits an int (make() checks).
struct PoolWindow {
  int samples = 0;   // N in NHWC; 1 in NCHW, whose samples fold into channels (PlaneLayout)
  int channels = 0;  // C in NHWC; N * C in NCHW
  int in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int kernel_h = 0, kernel_w = 0, stride_h = 0, stride_w = 0, pad_h = 0, pad_w = 0;

  /// A stride of 0 means "same as kernel", as in MaxPool2dSpec and AvgPool2dSpec. `output` is the
  /// shape that shape inference gave; `layout` that of both tensors. Throws runtime::ShapeError
  /// when a count exceeds an int.
  static PoolWindow make(const Pair& kernel, const Pair& stride, const Pair& padding,
                         const Shape& input, const Shape& output, Layout layout) {
    checked_int(input.numel(), "pooling input elements");
    PoolWindow w;
    const bool nhwc = layout == Layout::Nhwc;
    w.samples = nhwc ? checked_int(input.n(), "pooling samples") : 1;
    w.channels = checked_int(nhwc ? input.c() : input.n() * input.c(), "pooling planes");
    w.in_h = static_cast<int>(input.h());
    w.in_w = static_cast<int>(input.w());
    w.out_h = static_cast<int>(output.h());
    w.out_w = static_cast<int>(output.w());
    w.kernel_h = checked_int(kernel[0], "pooling kernel");
    w.kernel_w = checked_int(kernel[1], "pooling kernel");
    w.stride_h = stride[0] == 0 ? w.kernel_h : checked_int(stride[0], "pooling stride");
    w.stride_w = stride[1] == 0 ? w.kernel_w : checked_int(stride[1], "pooling stride");
    w.pad_h = checked_int(padding[0], "pooling padding");
    w.pad_w = checked_int(padding[1], "pooling padding");
    return w;
  }

  VDNN_HOST_DEVICE int planes() const { return samples * channels; }
  VDNN_HOST_DEVICE int in_plane() const { return in_h * in_w; }
  VDNN_HOST_DEVICE int out_plane() const { return out_h * out_w; }
  /// The addressing of the input (and input gradient) and of the output (and output gradient).
  template <Layout L>
  VDNN_HOST_DEVICE PlaneLayout<L> inputs() const {
    return {channels, in_plane()};
  }
  template <Layout L>
  VDNN_HOST_DEVICE PlaneLayout<L> outputs() const {
    return {channels, out_plane()};
  }
  /// Input rows (columns) under the window of output row `oh` (column `ow`), clipped to the input.
  VDNN_HOST_DEVICE IndexRange rows_under(int oh) const {
    return under(oh, kernel_h, stride_h, pad_h, in_h);
  }
  VDNN_HOST_DEVICE IndexRange cols_under(int ow) const {
    return under(ow, kernel_w, stride_w, pad_w, in_w);
  }
  /// Output rows (columns) whose window covers input row `ih` (column `iw`).
  VDNN_HOST_DEVICE IndexRange rows_over(int ih) const {
    return over(ih, kernel_h, stride_h, pad_h, out_h);
  }
  VDNN_HOST_DEVICE IndexRange cols_over(int iw) const {
    return over(iw, kernel_w, stride_w, pad_w, out_w);
  }

 private:
  // Window o spans [o * stride - pad, o * stride - pad + kernel) along one axis.
  VDNN_HOST_DEVICE static IndexRange under(int o, int kernel, int stride, int pad, int in) {
    const int start = o * stride - pad;
    return {start < 0 ? 0 : start, start + kernel < in ? start + kernel : in};
  }
  // Window o covers i when i + pad - kernel < o * stride <= i + pad.
  VDNN_HOST_DEVICE static IndexRange over(int i, int kernel, int stride, int pad, int out) {
    const int first = i + pad - kernel + 1;
    const int last = (i + pad) / stride;
    return {first <= 0 ? 0 : (first + stride - 1) / stride, last + 1 < out ? last + 1 : out};
  }
};

}  // namespace vdnn::layers::cuda

#ifdef __CUDACC__
#include "layers/cuda/Vectors.cuh"

namespace vdnn::layers::cuda {

/// Pooling backward for the input element at memory index `index` of dx (one thread each), both
/// tensors stored in L with elements T (float or __nv_bfloat16): adds in float, in output order (as
/// the CPU layers do), contribution(x_plane, pixel, rows, cols, dy) of every output window that
/// covers the element, where x_plane is the offsets of the element's input plane and rows/cols the
/// window's extent, onto dx when `accumulate`; stores the sum rounded once.
template <Layout L, typename T, typename Contribution>
__device__ void gather_window_gradients(const PoolWindow& w, int index, const T* dy, T* dx,
                                        bool accumulate, const Contribution& contribution) {
  const PlanePixel at = w.inputs<L>().locate(index);
  const PlaneOffsets<L> x_plane = w.inputs<L>().plane(at.sample, at.channel);
  const PlaneOffsets<L> dy_plane = w.outputs<L>().plane(at.sample, at.channel);
  const IndexRange out_rows = w.rows_over(at.pixel / w.in_w);
  const IndexRange out_cols = w.cols_over(at.pixel % w.in_w);
  float sum = accumulate ? to_float(dx[index]) : 0.0f;
  for (int oh = out_rows.begin; oh < out_rows.end; ++oh) {
    const IndexRange rows = w.rows_under(oh);
    for (int ow = out_cols.begin; ow < out_cols.end; ++ow) {
      sum += contribution(x_plane, at.pixel, rows, w.cols_under(ow),
                          to_float(dy[dy_plane[oh * w.out_w + ow]]));
    }
  }
  dx[index] = from_float<T>(sum);
}

}  // namespace vdnn::layers::cuda
#endif
