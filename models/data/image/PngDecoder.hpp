// PngDecoder: the PNG half of ImageDecoder (libpng): the whole image decoded to 8-bit RGB,
// then the box cut out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "models/data/image/ImageDecoder.hpp"

namespace vdnn::models::detail {

/// read_image_info() of a file whose magic says PNG.
ImageInfo png_image_info(const std::uint8_t* data, std::size_t size, const std::string& name,
                         const DecodeLimits& limits);

/// decode_region() of a file whose magic says PNG.
DecodedRegion decode_png_region(const std::uint8_t* data, std::size_t size, const std::string& name,
                                const PixelBox& box, const DecodeLimits& limits);

}  // namespace vdnn::models::detail
