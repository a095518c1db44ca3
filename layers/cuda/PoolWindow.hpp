// PoolWindow: the geometry of 2-D pooling over NCHW planes as plain ints, shared by the host code
// (cuDNN descriptors) and the device code (the backward kernels) of the CUDA pooling layers.
#pragma once

#include "layers/LayerSpec.hpp"
#include "layers/cuda/CudaLayerChecks.hpp"

#ifdef __CUDACC__
#define VDNN_HOST_DEVICE __host__ __device__
#else
#define VDNN_HOST_DEVICE
#endif

namespace vdnn::layers::cuda {

/// A half-open index range [begin, end); empty when end <= begin.
struct IndexRange {
  int begin = 0;
  int end = 0;
};

/// One pooling window sliding over `planes` (N * C) planes. A value type; every element index of
/// the input and output fits an int (make() checks).
struct PoolWindow {
  int planes = 0;
  int in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int kernel_h = 0, kernel_w = 0, stride_h = 0, stride_w = 0, pad_h = 0, pad_w = 0;

  /// A stride of 0 means "same as kernel", as in MaxPool2dSpec and AvgPool2dSpec. `output` is the
  /// shape that shape inference gave. Throws runtime::ShapeError when a count exceeds an int.
  static PoolWindow make(const Pair& kernel, const Pair& stride, const Pair& padding,
                         const Shape& input, const Shape& output) {
    checked_int(input.numel(), "pooling input elements");
    PoolWindow w;
    w.planes = checked_int(input.n() * input.c(), "pooling planes");
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

  VDNN_HOST_DEVICE int in_plane() const { return in_h * in_w; }
  VDNN_HOST_DEVICE int out_plane() const { return out_h * out_w; }
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

#ifdef __CUDACC__
/// Pooling backward for input element `index` of dx (one thread each): adds, in output order (as
/// the CPU layers do), contribution(plane, pixel, rows, cols, dy) of every output window that
/// covers the element, where rows/cols is the window's extent, onto dx when `accumulate`.
template <typename Contribution>
__device__ void gather_window_gradients(const PoolWindow& w, int index, const float* dy, float* dx,
                                        bool accumulate, const Contribution& contribution) {
  const int plane = index / w.in_plane();
  const int pixel = index - plane * w.in_plane();
  const float* dy_plane = dy + plane * w.out_plane();
  const IndexRange out_rows = w.rows_over(pixel / w.in_w);
  const IndexRange out_cols = w.cols_over(pixel % w.in_w);
  float sum = accumulate ? dx[index] : 0.0f;
  for (int oh = out_rows.begin; oh < out_rows.end; ++oh) {
    const IndexRange rows = w.rows_under(oh);
    for (int ow = out_cols.begin; ow < out_cols.end; ++ow) {
      sum += contribution(plane, pixel, rows, w.cols_under(ow), dy_plane[oh * w.out_w + ow]);
    }
  }
  dx[index] = sum;
}
#endif

}  // namespace vdnn::layers::cuda
