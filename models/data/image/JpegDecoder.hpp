// JpegDecoder: the JPEG half of ImageDecoder (libjpeg-turbo's libjpeg API), DCT-scaled and
// cropped decoding of a box.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "models/data/image/ImageDecoder.hpp"

namespace vdnn::models::detail {

/// read_image_info() of a file whose magic says JPEG.
ImageInfo jpeg_image_info(const std::uint8_t* data, std::size_t size, const std::string& name,
                          const DecodeLimits& limits);

/// decode_region() of a file whose magic says JPEG.
DecodedRegion decode_jpeg_region(const std::uint8_t* data, std::size_t size,
                                 const std::string& name, const PixelBox& box,
                                 std::int64_t min_width, std::int64_t min_height,
                                 const DecodeLimits& limits);

}  // namespace vdnn::models::detail
