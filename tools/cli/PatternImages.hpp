// PatternImages: the learnable per-class pictures `vdnn make-images` writes, and how each is
// stored (baseline, progressive, gray or CMYK JPEG, or PNG).
#pragma once

#include <cstdint>
#include <vector>

#include "models/data/image/RgbImage.hpp"

namespace vdnn::tools {

/// The classes with patterns of their own: every combination of 5 stripe orientations, 3 stripe
/// periods, 7 motif shapes, 2 motif polarities and 2 stripe waveforms.
inline constexpr std::int32_t kMaxPatternClasses = 420;

/// How a generated image is stored.
enum class StoredKind : std::uint8_t { Jpeg, ProgressiveJpeg, GrayJpeg, CmykJpeg, Png };

/// The kind of image `index` of a split: of every 100 consecutive indices (from 0) one is a PNG,
/// 3 are grayscale JPEGs, 1 a CMYK JPEG (Adobe CMYK or YCCK), 10 progressive JPEGs and 85 baseline
/// YCbCr JPEGs, in an order shuffled per hundred from `seed`.
StoredKind stored_kind(std::uint64_t seed, std::int64_t index);

/// ".jpg" or ".png".
const char* file_extension(StoredKind kind) noexcept;

/// The picture of class `label` (0 .. kMaxPatternClasses - 1) drawn from `image_seed`: shorter
/// side uniform in [min_side, max_side], long side 1 to 16/9 times it (landscape 70%). The class
/// is in luminance and survives grayscale, flips and random-resized crops: stripes of a class
/// orientation (0 .. 90 degrees in 22.5-degree steps, mirrored at random; a flip mirrors them
/// too), period (1/45, 1/15 or 1/5 of the shorter side) and waveform (sine or square), over which
/// motifs of a class shape (disc, square, triangle, plus, ring, diamond, x) and polarity (near
/// black or near white) are scattered at about 1/18 of the shorter side. Colours, phase, positions
/// and per-pixel noise are random. The digits come from the label by the Chinese remainder
/// theorem (label mod 5, 3, 7, 2), so consecutive classes differ in every cue. Pure.
models::RgbImage render_pattern(std::int32_t label, std::uint64_t image_seed, std::int64_t min_side,
                                std::int64_t max_side);

/// The file of `image` stored as `kind`, JPEG quality drawn from `image_seed`.
std::vector<std::uint8_t> encode_pattern(const models::RgbImage& image, StoredKind kind,
                                         std::uint64_t image_seed);

}  // namespace vdnn::tools
