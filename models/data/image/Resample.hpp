// Resample: PIL's bilinear resize of an RgbImage region (what torchvision's RandomResizedCrop,
// Resize and CenterCrop do to PIL images), the flip folded in: its plan (the filter tables, which
// the GPU's BatchResampler also runs) and its CPU passes.
#pragma once

#include <cstdint>
#include <vector>

#include "models/data/image/ResizedCrop.hpp"
#include "models/data/image/RgbImage.hpp"

namespace vdnn::models {

/// A source rectangle in pixel coordinates, PIL's resize box: pixel x spans [x, x + 1). May be
/// fractional, e.g. a full-resolution crop mapped into a DCT-downscaled image.
struct SourceBox {
  double left = 0.0;
  double top = 0.0;
  double right = 0.0;
  double bottom = 0.0;
};

/// One resize: `box` of the source is stretched to a width x height image, of which the part
/// `keep` is written, mirrored left to right when `flip`. The filter reads only the source pixels
/// inside `window`: the whole image gives PIL's `resize(size, BILINEAR, box)`, the crop itself
/// gives torchvision's `resized_crop`, which crops before it resizes.
struct ResizeSpec {
  SourceBox box;
  PixelBox window;
  std::int64_t width = 0;
  std::int64_t height = 0;
  PixelBox keep;
  bool flip = false;
};

/// The fixed point of the filters' weights: Pillow's PRECISION_BITS for 8-bit images, 8 bits of
/// value and 2 of headroom in an int32. A pass starts each sum at 1 << (kWeightBits - 1), adds
/// pixel * weight over the taps, and writes the sum >> kWeightBits clipped to 255.
inline constexpr int kWeightBits = 32 - 8 - 2;

/// The filters of one axis: output i reads `taps` consecutive pixels from start[i] on, weighted
/// by weights[i * taps ..]; zero weights pad every output to the same tap count.
struct AxisFilter {
  std::int64_t taps = 0;
  std::vector<std::int64_t> start;
  std::vector<std::int32_t> weights;
};

/// Everything a resize needs besides the pixels: a vertical pass runs `vertical` down the columns,
/// a horizontal one `horizontal` along the rows. The first pass reads the source from pixel
/// (origin_left, origin_top) on and writes first_pass_rows() rows of first_pass_row_bytes()
/// bytes; the second reads those and writes height rows of width RGB pixels. The first pass's
/// output keeps the origin, so both filters' starts count from it, in pixels. Plain data: one
/// plan may be refilled for each resize, its vectors keeping their storage.
struct ResizePlan {
  std::int64_t source_width = 0;  // the source size it was made for
  std::int64_t source_height = 0;
  AxisFilter horizontal;  // `width` outputs, right to left when the spec flips
  AxisFilter vertical;    // `height` outputs
  /// Pillow 13's order: the vertical pass first, over only the `used` window columns that the
  /// kept outputs read; else the horizontal pass first, over only the `used` rows they read.
  bool vertical_first = false;
  std::int64_t origin_left = 0;
  std::int64_t origin_top = 0;
  std::int64_t used = 0;
  std::int64_t width = 0;  // of the kept output
  std::int64_t height = 0;

  std::int64_t first_pass_rows() const noexcept { return vertical_first ? height : used; }
  std::int64_t first_pass_row_bytes() const noexcept { return (vertical_first ? used : width) * 3; }
};

/// Fills `plan` for `spec` on a src_width x src_height source, reusing its storage. Throws
/// runtime::InvalidArgument when the source is empty, `window` leaves it, `box` is empty or
/// leaves `window`, the size is not positive, or `keep` is empty or leaves it.
void plan_resize(std::int64_t src_width, std::int64_t src_height, const ResizeSpec& spec,
                 ResizePlan& plan);

/// The spec of the training path: torchvision's resized_crop(img, top, left, h, w, [size, size])
/// of `crop` in a width x height image, then its RandomHorizontalFlip when `flip`. A fractional
/// `crop` reads the pixels it touches. Throws runtime::InvalidArgument when `crop` is empty or
/// leaves the image.
ResizeSpec resized_crop_spec(std::int64_t width, std::int64_t height, const SourceBox& crop,
                             std::int64_t size, bool flip);

/// The spec of the eval path: the whole width x height image resized to
/// geometry.resized_width x resized_height, of which only geometry.crop is kept. The image may
/// be a downscaled decode of the one `geometry` was computed for. Never throws; plan_resize
/// checks the result.
ResizeSpec centre_crop_spec(std::int64_t width, std::int64_t height,
                            const EvalGeometry& geometry) noexcept;

/// PIL's separable bilinear filter with antialiasing (the triangle widened by the downscale
/// factor, each output's weights normalized, 22-bit fixed point, the first pass rounded to 8 bits
/// before the second, the passes in Pillow 13's order): bitwise equal to Pillow 13, and within
/// one level of earlier Pillows, which always run the horizontal pass first. Holds the plan and
/// the intermediate rows, reused between calls: one per worker thread (not thread-safe); a call
/// allocates only while they grow.
class Resampler {
 public:
  /// Writes keep.height rows of keep.width RGB pixels (HWC, no padding) to `out`. Throws
  /// runtime::InvalidArgument when `src` is empty or inconsistent, or as plan_resize().
  void resize(const RgbImage& src, const ResizeSpec& spec, std::uint8_t* out);

  /// The training path: resize() of resized_crop_spec(); size x size pixels to `out`. Throws as
  /// both.
  void resized_crop(const RgbImage& src, const SourceBox& crop, std::int64_t size, bool flip,
                    std::uint8_t* out);

  /// The eval path: resize() of centre_crop_spec(); only geometry.crop is computed and written to
  /// `out`. Throws as resize().
  void resize_centre_crop(const RgbImage& src, const EvalGeometry& geometry, std::uint8_t* out);

 private:
  ResizePlan plan_;
  std::vector<std::uint8_t> rows_;  // the first pass's output
  std::vector<std::int32_t> sums_;  // one output row of the vertical pass
  std::vector<std::uint8_t> line_;  // one input row of the horizontal pass, padded
};

}  // namespace vdnn::models
