// PIL's bilinear resampling (Pillow 13's libImaging/Resample.c: precompute_coeffs, 8-bit fixed
// point, two passes in its order) restricted to the outputs a crop keeps: the plan, and the passes
// that run it on the CPU.
#include "models/data/image/Resample.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

constexpr std::int32_t kHalf = 1 << (kWeightBits - 1);
// PIL's BILINEAR support: the triangle's half-width before widening.
constexpr double kBilinearSupport = 1.0;

// `x` rounded to double on its own: GCC would fuse it into the following addition, and Pillow's
// builds (and clang, which fuses only within one expression) do not.
inline double unfused(double x) {
#if defined(__has_builtin)
#if __has_builtin(__builtin_assoc_barrier)
  return __builtin_assoc_barrier(x);
#endif
#endif
  return x;
}

double bilinear(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

std::uint8_t clip8(std::int32_t sum) {
  // Bilinear weights are non-negative, so the sum is too.
  return static_cast<std::uint8_t>(std::min(sum >> kWeightBits, 255));
}

// One axis of a resize: the box's edges [in0, in1) in the window's coordinates, as PIL sees a
// cropped image (and, like its C API, as floats), the window's size, the output size, and the
// outputs first .. first + count - 1 that are wanted, in reverse order when `reverse`.
struct AxisSpec {
  float in0;
  float in1;
  std::int64_t window_size;
  std::int64_t out_size;
  std::int64_t first;
  std::int64_t count;
  bool reverse;
};

AxisSpec axis_spec(double in0, double in1, std::int64_t window_start, std::int64_t window_size,
                   std::int64_t out_size, std::int64_t first, std::int64_t count, bool reverse) {
  const auto start = static_cast<double>(window_start);
  return {static_cast<float>(in0 - start),
          static_cast<float>(in1 - start),
          window_size,
          out_size,
          first,
          count,
          reverse};
}

// PIL's precompute_coeffs for one axis: the scale, and the triangle's half-width and slope.
struct AxisScale {
  double scale;
  double support;
  double inverse_scale;
};

AxisScale axis_scale(const AxisSpec& axis) {
  const double scale =
      static_cast<double>(axis.in1 - axis.in0) / static_cast<double>(axis.out_size);
  const double filter_scale = std::max(scale, 1.0);
  return {scale, kBilinearSupport * filter_scale, 1.0 / filter_scale};
}

// The window pixels lo .. hi - 1 that wanted output i reads, around `center`.
struct OutputTaps {
  double center;
  std::int64_t lo;
  std::int64_t hi;
};

OutputTaps output_taps(const AxisSpec& axis, const AxisScale& s, std::int64_t i) {
  const std::int64_t out = axis.first + (axis.reverse ? axis.count - 1 - i : i);
  const double center = axis.in0 + unfused((static_cast<double>(out) + 0.5) * s.scale);
  const std::int64_t lo =
      std::max<std::int64_t>(static_cast<std::int64_t>(center - s.support + 0.5), 0);
  const std::int64_t hi =
      std::min(static_cast<std::int64_t>(center + s.support + 0.5), axis.window_size);
  return {center, lo, hi};
}

// PIL's raw weight of window pixel x for an output around `center`.
double raw_weight(const AxisScale& s, const OutputTaps& o, std::int64_t x) {
  return bilinear(unfused((static_cast<double>(x) - o.center + 0.5) * s.inverse_scale));
}

// The whole filter of one axis: PIL's weights in 22-bit fixed point (normalize_coeffs_8bpc),
// every output padded to the largest tap count with zeros; an output near the window's end
// starts earlier so that its taps stay inside the window. Zero weights leave PIL's sums
// unchanged. The raw weights are computed twice, for the total and for each weight, so that no
// table of them is kept; the same expression gives the same double.
void build_axis(const AxisSpec& axis, AxisFilter& filter) {
  const AxisScale s = axis_scale(axis);
  std::int64_t taps = 1;
  for (std::int64_t i = 0; i < axis.count; ++i) {
    const OutputTaps o = output_taps(axis, s, i);
    taps = std::max(taps, o.hi - o.lo);
  }
  filter.taps = taps;
  filter.start.resize(static_cast<std::size_t>(axis.count));
  filter.weights.assign(static_cast<std::size_t>(axis.count * taps), 0);
  for (std::int64_t i = 0; i < axis.count; ++i) {
    const OutputTaps o = output_taps(axis, s, i);
    double total = 0.0;
    for (std::int64_t x = o.lo; x < o.hi; ++x) total += raw_weight(s, o, x);
    const std::int64_t lead = std::max<std::int64_t>(o.lo + taps - axis.window_size, 0);
    filter.start[static_cast<std::size_t>(i)] = o.lo - lead;
    std::int32_t* fixed = filter.weights.data() + i * taps + lead;
    for (std::int64_t x = o.lo; x < o.hi; ++x) {
      double k = raw_weight(s, o, x);
      if (total != 0.0) k /= total;
      fixed[x - o.lo] = static_cast<std::int32_t>(0.5 + k * (1 << kWeightBits));
    }
  }
}

// Four int32 lanes: one pixel's R, G, B and a lane that is never read.
using PixelLanes = std::int32_t __attribute__((vector_size(16)));
using UnsignedLanes = std::uint32_t __attribute__((vector_size(16)));

// The pixel at `p` as lanes; reads one byte past it. (Shifts of one broadcast word: GCC 12 makes
// scalar code of __builtin_convertvector from bytes.)
PixelLanes load_pixel(const std::uint8_t* p) {
  std::uint32_t word;
  std::memcpy(&word, p, sizeof(word));
  const UnsignedLanes bytes =
      (UnsignedLanes{word, word, word, word} >> UnsignedLanes{0, 8, 16, 24}) & 0xFFu;
  return reinterpret_cast<PixelLanes>(bytes);
}

void store_pixel(PixelLanes sums, std::uint8_t* out) {
  // Bilinear weights are non-negative, so the sums are too.
  PixelLanes value = sums >> kWeightBits;
  const PixelLanes over = value > 255;
  value = (value & ~over) | (over & 255);
  out[0] = static_cast<std::uint8_t>(value[0]);
  out[1] = static_cast<std::uint8_t>(value[1]);
  out[2] = static_cast<std::uint8_t>(value[2]);
}

// PIL's horizontal pass over `rows` rows of `in` into `out`, a pixel's three channels in one
// vector; kTaps > 0 fixes the tap count so that the compiler unrolls the taps (0: the filter's
// own count). Each row is copied into `line` first, whose padding byte the last pixel's load reads.
template <int kTaps>
void horizontal_rows(const AxisFilter& filter, const std::uint8_t* in, std::int64_t in_stride,
                     std::int64_t rows, std::uint8_t* out, std::int64_t out_stride,
                     std::vector<std::uint8_t>& line) {
  const std::int64_t taps = kTaps > 0 ? kTaps : filter.taps;
  const auto width = static_cast<std::int64_t>(filter.start.size());
  const std::int64_t* starts = filter.start.data();
  const auto line_bytes =
      static_cast<std::size_t>((std::max(filter.start.front(), filter.start.back()) + taps) * 3);
  line.resize(line_bytes + 1);
  for (std::int64_t y = 0; y < rows; ++y, in += in_stride, out += out_stride) {
    std::memcpy(line.data(), in, line_bytes);
    const std::int32_t* k = filter.weights.data();
    for (std::int64_t x = 0; x < width; ++x, k += taps) {
      const std::uint8_t* p = line.data() + starts[x] * 3;
      PixelLanes sums = {kHalf, kHalf, kHalf, kHalf};
      for (std::int64_t t = 0; t < taps; ++t) sums += load_pixel(p + 3 * t) * k[t];
      store_pixel(sums, out + 3 * x);
    }
  }
}

void horizontal_pass(const AxisFilter& filter, const std::uint8_t* in, std::int64_t in_stride,
                     std::int64_t rows, std::uint8_t* out, std::int64_t out_stride,
                     std::vector<std::uint8_t>& line) {
  // Crops of ImageNet-sized images to 224 use 2 to 6 taps.
  switch (filter.taps) {
    case 2:
      return horizontal_rows<2>(filter, in, in_stride, rows, out, out_stride, line);
    case 3:
      return horizontal_rows<3>(filter, in, in_stride, rows, out, out_stride, line);
    case 4:
      return horizontal_rows<4>(filter, in, in_stride, rows, out, out_stride, line);
    case 5:
      return horizontal_rows<5>(filter, in, in_stride, rows, out, out_stride, line);
    case 6:
      return horizontal_rows<6>(filter, in, in_stride, rows, out, out_stride, line);
    default:
      return horizontal_rows<0>(filter, in, in_stride, rows, out, out_stride, line);
  }
}

// PIL's vertical pass: each output row of `row_bytes` bytes from `in`'s rows, summed a whole row
// at a time into `sums` so that the loops vectorize.
void vertical_pass(const AxisFilter& filter, std::vector<std::int32_t>& sums,
                   const std::uint8_t* in, std::int64_t in_stride, std::int64_t row_bytes,
                   std::uint8_t* out, std::int64_t out_stride) {
  sums.resize(static_cast<std::size_t>(row_bytes));
  std::int32_t* sum = sums.data();
  const std::int32_t* k = filter.weights.data();
  for (const std::int64_t start : filter.start) {
    std::fill(sum, sum + row_bytes, kHalf);
    const std::uint8_t* row = in + start * in_stride;
    for (std::int64_t t = 0; t < filter.taps; ++t, row += in_stride) {
      const std::int32_t weight = *k++;
      for (std::int64_t i = 0; i < row_bytes; ++i) sum[i] += row[i] * weight;
    }
    for (std::int64_t i = 0; i < row_bytes; ++i) out[i] = clip8(sum[i]);
    out += out_stride;
  }
}

// The window pixels that an axis's kept outputs read, as (first, count); the filter's starts
// then count from the first.
std::pair<std::int64_t, std::int64_t> used_range(AxisFilter& filter) {
  // Starts rise with the output, or fall when it is reversed.
  const std::int64_t first = std::min(filter.start.front(), filter.start.back());
  const std::int64_t end = std::max(filter.start.front(), filter.start.back()) + filter.taps;
  for (auto& start : filter.start) start -= first;
  return {first, end - first};
}

// Pillow 13's order of the passes (its ImagingResampleInner): the vertical one first when the
// height shrinks by more than twice as many pixels as the width, the horizontal one otherwise
// (always, before Pillow 13). The orders round differently in between, by at most one level.
bool vertical_first(const PixelBox& window, std::int64_t width, std::int64_t height) {
  const std::int64_t height_shrink = window.height - height;
  return height_shrink > 0 && height_shrink > 2 * (window.width - width);
}

void check_inside(const PixelBox& inner, std::int64_t width, std::int64_t height,
                  const char* what) {
  VDNN_EXPECTS(inner.width > 0 && inner.height > 0 && inner.left >= 0 && inner.top >= 0 &&
                   inner.left + inner.width <= width && inner.top + inner.height <= height,
               std::string(what) + " must be a non-empty box inside " + std::to_string(width) +
                   " x " + std::to_string(height));
}

void check_spec(std::int64_t src_width, std::int64_t src_height, const ResizeSpec& spec) {
  VDNN_EXPECTS(src_width > 0 && src_height > 0, "the source image must be non-empty");
  check_inside(spec.window, src_width, src_height, "the resize window");
  const SourceBox& b = spec.box;
  const PixelBox& w = spec.window;
  // Negated comparisons reject NaN too.
  VDNN_EXPECTS(b.left >= static_cast<double>(w.left) && b.top >= static_cast<double>(w.top) &&
                   b.right <= static_cast<double>(w.left + w.width) &&
                   b.bottom <= static_cast<double>(w.top + w.height) && b.left < b.right &&
                   b.top < b.bottom,
               "the resize box must be non-empty and inside the window");
  VDNN_EXPECTS(spec.width > 0 && spec.height > 0, "the resized size must be positive");
  check_inside(spec.keep, spec.width, spec.height, "the kept part of the resized image");
}

}  // namespace

void plan_resize(std::int64_t src_width, std::int64_t src_height, const ResizeSpec& spec,
                 ResizePlan& plan) {
  check_spec(src_width, src_height, spec);
  const PixelBox& window = spec.window;
  const PixelBox& keep = spec.keep;
  build_axis(axis_spec(spec.box.left, spec.box.right, window.left, window.width, spec.width,
                       keep.left, keep.width, spec.flip),
             plan.horizontal);
  build_axis(axis_spec(spec.box.top, spec.box.bottom, window.top, window.height, spec.height,
                       keep.top, keep.height, false),
             plan.vertical);
  plan.source_width = src_width;
  plan.source_height = src_height;
  plan.vertical_first = vertical_first(window, spec.width, spec.height);
  plan.origin_left = window.left;
  plan.origin_top = window.top;
  plan.width = keep.width;
  plan.height = keep.height;
  // The first pass makes only the columns (vertical first) or rows that the kept outputs read.
  AxisFilter& trimmed = plan.vertical_first ? plan.horizontal : plan.vertical;
  std::int64_t& origin = plan.vertical_first ? plan.origin_left : plan.origin_top;
  const auto [first, used] = used_range(trimmed);
  origin += first;
  plan.used = used;
}

ResizeSpec resized_crop_spec(std::int64_t width, std::int64_t height, const SourceBox& crop,
                             std::int64_t size, bool flip) {
  // Negated comparisons reject NaN too.
  VDNN_EXPECTS(crop.left >= 0.0 && crop.top >= 0.0 && crop.right <= static_cast<double>(width) &&
                   crop.bottom <= static_cast<double>(height) && crop.left < crop.right &&
                   crop.top < crop.bottom,
               "the crop box must be non-empty and inside the image");
  // The source pixels the crop touches: the crop itself when it is whole pixels.
  const auto left = static_cast<std::int64_t>(std::floor(crop.left));
  const auto top = static_cast<std::int64_t>(std::floor(crop.top));
  const auto right = static_cast<std::int64_t>(std::ceil(crop.right));
  const auto bottom = static_cast<std::int64_t>(std::ceil(crop.bottom));
  return {crop, {top, left, bottom - top, right - left}, size, size, {0, 0, size, size}, flip};
}

ResizeSpec centre_crop_spec(std::int64_t width, std::int64_t height,
                            const EvalGeometry& geometry) noexcept {
  const SourceBox whole{0.0, 0.0, static_cast<double>(width), static_cast<double>(height)};
  return {
      whole, {0, 0, height, width}, geometry.resized_width, geometry.resized_height, geometry.crop,
      false};
}

void Resampler::resize(const RgbImage& src, const ResizeSpec& spec, std::uint8_t* out) {
  VDNN_EXPECTS(src.width > 0 && src.height > 0 &&
                   src.pixels.size() == static_cast<std::size_t>(src.width * src.height * 3),
               "the source image must be non-empty with width * height * 3 bytes");
  plan_resize(src.width, src.height, spec, plan_);
  const ResizePlan& plan = plan_;
  const std::int64_t src_stride = src.width * 3;
  const std::uint8_t* origin = src.row(plan.origin_top) + plan.origin_left * 3;
  const std::int64_t stride = plan.first_pass_row_bytes();
  rows_.resize(static_cast<std::size_t>(plan.first_pass_rows() * stride));
  const std::int64_t out_stride = plan.width * 3;
  if (plan.vertical_first) {
    vertical_pass(plan.vertical, sums_, origin, src_stride, stride, rows_.data(), stride);
    horizontal_pass(plan.horizontal, rows_.data(), stride, plan.height, out, out_stride, line_);
  } else {
    horizontal_pass(plan.horizontal, origin, src_stride, plan.used, rows_.data(), stride, line_);
    vertical_pass(plan.vertical, sums_, rows_.data(), stride, stride, out, out_stride);
  }
}

void Resampler::resized_crop(const RgbImage& src, const SourceBox& crop, std::int64_t size,
                             bool flip, std::uint8_t* out) {
  resize(src, resized_crop_spec(src.width, src.height, crop, size, flip), out);
}

void Resampler::resize_centre_crop(const RgbImage& src, const EvalGeometry& geometry,
                                   std::uint8_t* out) {
  resize(src, centre_crop_spec(src.width, src.height, geometry), out);
}

}  // namespace vdnn::models
