// Sliding-window geometry, the im2col / col2im transforms of the CPU convolution and the argument
// checks of the CPU pooling layers.
#include "layers/cpu/Window2d.hpp"

#include <algorithm>
#include <cstddef>

#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {
namespace {

// Calls visit(segment, pixel, valid) once for every segment of the column matrix, i.e. every
// (tap row, output row) pair, in memory order: `segment` indexes its first entry, `valid` holds the
// output columns that read the input (empty where the tap reads padding), and `pixel` indexes the
// input pixel read by valid.begin; the pixels of a segment are stride[1] apart.
template <typename Visit>
void for_each_segment(const Window2d& w, std::int64_t channels, Visit&& visit) {
  std::int64_t segment = 0;
  for (std::int64_t c = 0; c < channels; ++c) {
    for (std::int64_t ki = 0; ki < w.kernel[0]; ++ki) {
      const Range rows = w.outputs_reading(0, ki);
      for (std::int64_t kj = 0; kj < w.kernel[1]; ++kj) {
        const Range cols = w.outputs_reading(1, kj);
        const std::int64_t iw = cols.begin * w.stride[1] - w.padding[1] + kj * w.dilation[1];
        for (std::int64_t oh = 0; oh < w.out[0]; ++oh, segment += w.out[1]) {
          const bool inside = oh >= rows.begin && oh < rows.end;
          const std::int64_t ih = oh * w.stride[0] - w.padding[0] + ki * w.dilation[0];
          visit(segment, (c * w.in[0] + ih) * w.in[1] + iw, inside ? cols : Range{});
        }
      }
    }
  }
}

}  // namespace

Window2d Window2d::for_conv(const Conv2dSpec& spec, const Shape& input, const Shape& output) {
  return {{input.h(), input.w()}, {output.h(), output.w()}, spec.kernel, spec.stride, spec.padding,
          spec.dilation};
}

Window2d Window2d::for_pool(const Pair& kernel, const Pair& stride, const Pair& padding,
                            const Shape& input, const Shape& output) {
  const Pair effective{stride[0] == 0 ? kernel[0] : stride[0],
                       stride[1] == 0 ? kernel[1] : stride[1]};
  return {{input.h(), input.w()}, {output.h(), output.w()}, kernel, effective, padding, {1, 1}};
}

Range Window2d::outputs_reading(int axis, std::int64_t tap) const noexcept {
  const auto a = static_cast<std::size_t>(axis);
  // Output o reads position o * stride + offset; keep it within [0, in).
  const std::int64_t offset = tap * dilation[a] - padding[a];
  const std::int64_t last = in[a] - 1 - offset;
  if (last < 0) return {};
  const std::int64_t begin = offset >= 0 ? 0 : (-offset + stride[a] - 1) / stride[a];
  return {begin, std::min(out[a], last / stride[a] + 1)};
}

Range Window2d::inputs_under(int axis, std::int64_t o) const noexcept {
  const auto a = static_cast<std::size_t>(axis);
  const std::int64_t start = o * stride[a] - padding[a];
  return {std::max<std::int64_t>(start, 0), std::min(in[a], start + kernel[a])};
}

void expect_pool_forward(const std::string& layer, const ForwardArgs& args, const Shape& input,
                         const Shape& output) {
  VDNN_EXPECTS(
      args.inputs.size() == 1 && args.inputs[0].shape == input && args.output.shape == output,
      layer + "::forward: views do not match the layer's shapes");
}

bool expect_pool_backward(const std::string& layer, const BackwardArgs& args, const Shape& input,
                          const Shape& output, bool reads_input) {
  VDNN_EXPECTS((!reads_input || (args.inputs.size() == 1 && args.inputs[0].shape == input)) &&
                   args.grad_inputs.size() == 1 && args.grad_output.shape == output,
               layer + "::backward: views do not match the layer's shapes");
  if (args.grad_inputs[0].tensor.empty()) return false;
  VDNN_EXPECTS(args.grad_inputs[0].tensor.shape == input,
               layer + "::backward: input gradient view does not match the input shape");
  return true;
}

template <typename T>
void im2col(const Window2d& window, std::int64_t channels, const T* image, T* columns) {
  const std::int64_t width = window.out[1];
  const std::int64_t stride = window.stride[1];
  // Every entry is written once (zeros around the valid part) rather than zero-filling the whole
  // matrix first: the columns are larger than L2, so a second pass costs memory bandwidth.
  for_each_segment(window, channels, [&](std::int64_t segment, std::int64_t pixel, Range valid) {
    T* out = columns + segment;
    const std::int64_t count = valid.end - valid.begin;
    if (count <= 0) {
      std::fill_n(out, width, T(0));
      return;
    }
    std::fill_n(out, valid.begin, T(0));
    if (stride == 1) {
      std::copy_n(image + pixel, count, out + valid.begin);
    } else {
      for (std::int64_t i = 0; i < count; ++i) out[valid.begin + i] = image[pixel + i * stride];
    }
    std::fill_n(out + valid.end, width - valid.end, T(0));
  });
}

template <typename T>
void col2im_add(const Window2d& window, std::int64_t channels, const T* columns, T* image) {
  const std::int64_t stride = window.stride[1];
  for_each_segment(window, channels, [&](std::int64_t segment, std::int64_t pixel, Range valid) {
    const T* in = columns + segment + valid.begin;
    const std::int64_t count = valid.end - valid.begin;
    // The unit-stride branch lets the compiler vectorize the common case.
    if (stride == 1) {
      for (std::int64_t i = 0; i < count; ++i) image[pixel + i] += in[i];
    } else {
      for (std::int64_t i = 0; i < count; ++i) image[pixel + i * stride] += in[i];
    }
  });
}

template void im2col<float>(const Window2d&, std::int64_t, const float*, float*);
template void im2col<double>(const Window2d&, std::int64_t, const double*, double*);
template void col2im_add<float>(const Window2d&, std::int64_t, const float*, float*);
template void col2im_add<double>(const Window2d&, std::int64_t, const double*, double*);

}  // namespace vdnn::layers::cpu
