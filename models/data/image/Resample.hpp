// Resample: PIL's bilinear resize of an RgbImage region (what torchvision's RandomResizedCrop,
// Resize and CenterCrop do to PIL images), the flip folded in, then the normalization to floats.
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

/// PIL's separable bilinear filter with antialiasing (the triangle widened by the downscale
/// factor, each output's weights normalized, 22-bit fixed point, the first pass rounded to 8 bits
/// before the second, the passes in Pillow 13's order): bitwise equal to Pillow 13, and within
/// one level of earlier Pillows, which always run the horizontal pass first. Holds the
/// coefficient tables and the intermediate rows, reused between calls: one per worker thread (not
/// thread-safe); a call allocates only while they grow.
class Resampler {
 public:
  /// Writes keep.height rows of keep.width RGB pixels (HWC, no padding) to `out`. Throws
  /// runtime::InvalidArgument when `src` is empty or inconsistent, `window` leaves it, `box` is
  /// empty or leaves `window`, the size is not positive, or `keep` is empty or leaves it.
  void resize(const RgbImage& src, const ResizeSpec& spec, std::uint8_t* out);

  /// The training path: torchvision's resized_crop(img, top, left, h, w, [size, size]) of `crop`,
  /// then its RandomHorizontalFlip when `flip`; size x size pixels to `out`. A fractional `crop`
  /// reads the pixels it touches. Throws runtime::InvalidArgument when `crop` is empty or leaves
  /// the image, or as resize().
  void resized_crop(const RgbImage& src, const SourceBox& crop, std::int64_t size, bool flip,
                    std::uint8_t* out);

  /// The eval path: the whole of `src` resized to geometry.resized_width x resized_height, of
  /// which only geometry.crop is computed and written to `out`. `src` may be a downscaled decode
  /// of the image `geometry` was computed for. Throws as resize().
  void resize_centre_crop(const RgbImage& src, const EvalGeometry& geometry, std::uint8_t* out);

  /// The filters of one axis: output i reads `taps` consecutive window pixels from start[i],
  /// weighted by weights[i * taps ..]; zero weights pad every output to the same tap count.
  /// Internal to Resampler, with its scratch (`raw` weights, per-output `used` tap counts).
  struct AxisFilter {
    std::int64_t taps = 0;
    std::vector<std::int64_t> start;
    std::vector<std::int32_t> weights;
    std::vector<double> raw;
    std::vector<std::int64_t> used;
  };

 private:
  AxisFilter horizontal_;
  AxisFilter vertical_;
  std::vector<std::uint8_t> rows_;  // the first pass's output
  std::vector<std::int32_t> sums_;  // one output row of the vertical pass
  std::vector<std::uint8_t> line_;  // one input row of the horizontal pass, padded
};

}  // namespace vdnn::models
