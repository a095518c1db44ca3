// JpegEncoder: RgbImage -> JPEG bytes (libjpeg-turbo), in any colour space the decoder reads; for
// the tests and `vdnn make-images`.
#pragma once

#include <cstdint>
#include <vector>

#include "models/data/image/ImageDecoder.hpp"
#include "models/data/image/RgbImage.hpp"

namespace vdnn::models {

/// Chroma sampling of a YCbCr JPEG: 4:2:0 (libjpeg's default), 4:2:2 or 4:4:4.
enum class ChromaSampling : std::uint8_t { S420, S422, S444 };

struct JpegEncoding {
  /// libjpeg's quality scale, 1 .. 100.
  int quality = 90;
  /// Progressive (libjpeg's simple progression) or baseline.
  bool progressive = false;
  /// How the samples are stored: YCbCr; Rgb (Adobe transform 0); Gray (ITU-R 601 luma of the
  /// pixels, as libjpeg converts); Cmyk or Ycck (Adobe-inverted CMYK with an Adobe marker, as
  /// Photoshop writes it, from k' = max(r, g, b), c' = 255 r / k', ...: decoding gives back the
  /// pixels within rounding). Palette is not a JPEG colour space.
  ImageColour colour = ImageColour::YCbCr;
  /// For YCbCr only; the other colour spaces are stored unsubsampled.
  ChromaSampling sampling = ChromaSampling::S420;
};

/// The JPEG file of `image`. Throws runtime::InvalidArgument for an empty image, one whose pixels
/// do not hold width x height x 3 bytes, a side over libjpeg's 65500, a quality outside 1 .. 100
/// or the Palette colour; runtime::Error if libjpeg fails (out of memory). Pure: any thread.
std::vector<std::uint8_t> encode_jpeg(const RgbImage& image, const JpegEncoding& encoding = {});

}  // namespace vdnn::models
