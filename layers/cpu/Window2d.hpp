// Window2d: the geometry of a 2-D sliding window over NCHW planes, shared by the CPU convolution
// (im2col / col2im) and the CPU pooling layers, and the argument checks of those pooling layers.
#pragma once

#include <cstdint>
#include <string>

#include "layers/Layer.hpp"
#include "layers/LayerSpec.hpp"

namespace vdnn::layers::cpu {

/// A half-open index range [begin, end); empty when end <= begin.
struct Range {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

/// Sliding-window geometry of one (height, width) plane: input and output extents, kernel, stride,
/// padding and dilation, all as (height, width) pairs. Axis 0 is height, axis 1 is width. A value
/// type; the factories take the output extents from the shapes that shape inference produced.
struct Window2d {
  Pair in{0, 0};
  Pair out{0, 0};
  Pair kernel{0, 0};
  Pair stride{1, 1};
  Pair padding{0, 0};
  Pair dilation{1, 1};

  static Window2d for_conv(const Conv2dSpec& spec, const Shape& input, const Shape& output);
  /// A stride of 0 means "same as kernel", as in MaxPool2dSpec and AvgPool2dSpec.
  static Window2d for_pool(const Pair& kernel, const Pair& stride, const Pair& padding,
                           const Shape& input, const Shape& output);
  /// The window of a MaxPool2dSpec or AvgPool2dSpec between `input` and `output`.
  template <typename PoolSpec>
  static Window2d for_pool(const PoolSpec& spec, const Shape& input, const Shape& output) {
    return for_pool(spec.kernel, spec.stride, spec.padding, input, output);
  }

  std::int64_t in_plane() const noexcept { return in[0] * in[1]; }
  std::int64_t out_plane() const noexcept { return out[0] * out[1]; }
  std::int64_t taps() const noexcept { return kernel[0] * kernel[1]; }

  /// Outputs o along `axis` whose kernel tap `tap` reads inside the input, i.e.
  /// 0 <= o * stride - padding + tap * dilation < in.
  Range outputs_reading(int axis, std::int64_t tap) const noexcept;
  /// Input positions along `axis` under the window of output `o`, clipped to the input (dilation
  /// 1, as in pooling).
  Range inputs_under(int axis, std::int64_t o) const noexcept;
};

/// One placement of a pooling window: the offset of its input plane, the flat index of its output
/// (plane-major, then row-major) and the input rows and columns under it, clipped to the plane.
struct WindowAt {
  std::int64_t plane = 0;
  std::int64_t out = 0;
  Range rows;
  Range cols;
};

/// Calls visit(const WindowAt&) for every output position of `planes` consecutive planes, in
/// output order. Pooling iterates with this.
template <typename Visit>
void for_each_window(const Window2d& window, std::int64_t planes, Visit&& visit) {
  WindowAt at;
  for (std::int64_t p = 0; p < planes; ++p) {
    at.plane = p * window.in_plane();
    for (std::int64_t oh = 0; oh < window.out[0]; ++oh) {
      at.rows = window.inputs_under(0, oh);
      for (std::int64_t ow = 0; ow < window.out[1]; ++ow, ++at.out) {
        at.cols = window.inputs_under(1, ow);
        visit(at);
      }
    }
  }
}

/// Throws runtime::InvalidArgument, with a message naming `layer`, unless `args` holds one input
/// of shape `input` and an output of shape `output`.
void expect_pool_forward(const std::string& layer, const ForwardArgs& args, const Shape& input,
                         const Shape& output);

/// Throws runtime::InvalidArgument, with a message naming `layer`, unless `args` holds one input
/// gradient of shape `input` or empty and an output gradient of shape `output`; when
/// `reads_input`, also one input of shape `input`. Returns false when the input gradient view is
/// empty, i.e. there is nothing to compute.
bool expect_pool_backward(const std::string& layer, const BackwardArgs& args, const Shape& input,
                          const Shape& output, bool reads_input);

/// Unfolds `channels` input planes of one image (channels x in[0] x in[1]) into a row-major column
/// matrix of (channels * taps()) rows and out_plane() columns; row (c, ki, kj) holds the input
/// pixel each output position reads through tap (ki, kj), or 0 in the padding. T is float or
/// double.
template <typename T>
void im2col(const Window2d& window, std::int64_t channels, const T* image, T* columns);

/// Adjoint of im2col: adds every column entry to the input pixel it was read from. `image` is
/// accumulated into, never cleared.
template <typename T>
void col2im_add(const Window2d& window, std::int64_t channels, const T* columns, T* image);

}  // namespace vdnn::layers::cpu
