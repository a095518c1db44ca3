// PngEncoder: PNG files in memory (libpng) of any colour type and bit depth, for the decoder's
// tests and `vdnn make-images`.
#pragma once

#include <cstdint>
#include <vector>

#include "models/data/image/RgbImage.hpp"

namespace vdnn::models {

/// PNG colour types.
enum class PngColour : std::uint8_t { Gray, GrayAlpha, Rgb, Rgba, Palette };

/// The samples of a PNG as stored.
struct PngRaster {
  std::int64_t width = 0;
  std::int64_t height = 0;
  PngColour colour = PngColour::Rgb;
  /// 8 or 16; also 1, 2 or 4 for Gray and Palette.
  int bit_depth = 8;
  /// Rows top to bottom, each width x channels samples: one byte per sample (below 2^bit_depth)
  /// up to 8 bits, two (big-endian) at 16.
  std::vector<std::uint8_t> samples;
  /// Palette: the PLTE entries as R, G, B triples (1 .. 256 of them).
  std::vector<std::uint8_t> palette;
  /// Palette: optional tRNS alpha of the first entries; Gray, Rgb: unused.
  std::vector<std::uint8_t> palette_alpha;
  /// Adam7 interlacing.
  bool interlaced = false;
};

/// The PNG file of `raster`. Throws runtime::InvalidArgument when the samples or palette do not
/// match the size and colour type, runtime::Error when libpng refuses the combination (e.g. a
/// 4-bit RGB) or runs out of memory. Pure: any thread.
std::vector<std::uint8_t> encode_png(const PngRaster& raster);

/// The 8-bit RGB PNG file of `image` (same errors).
std::vector<std::uint8_t> encode_png(const RgbImage& image);

}  // namespace vdnn::models
