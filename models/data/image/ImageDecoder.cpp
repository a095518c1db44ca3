// Sniffs JPEG or PNG from the magic bytes and hands the file to its decoder; the checks both
// decoders share (file size, decompression bombs, the requested box).
#include "models/data/image/ImageDecoder.hpp"

#include <cstring>

#include "models/data/image/CodecSupport.hpp"
#include "models/data/image/JpegDecoder.hpp"
#include "models/data/image/PngDecoder.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

constexpr std::uint8_t kJpegMagic[] = {0xFF, 0xD8, 0xFF};
constexpr std::uint8_t kPngMagic[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

bool starts_with(const std::uint8_t* data, std::size_t size, const void* magic,
                 std::size_t magic_size) {
  return size >= magic_size && std::memcmp(data, magic, magic_size) == 0;
}

// The formats people mistake for JPEG or PNG, by their magic; "" when none matches.
std::string known_other_format(const std::uint8_t* data, std::size_t size) {
  if (starts_with(data, size, "GIF8", 4)) return "a GIF image";
  if (starts_with(data, size, "BM", 2)) return "a BMP image";
  if (starts_with(data, size, "II*\0", 4) || starts_with(data, size, "MM\0*", 4)) {
    return "a TIFF image";
  }
  if (size >= 12 && starts_with(data, size, "RIFF", 4) && std::memcmp(data + 8, "WEBP", 4) == 0) {
    return "a WebP image";
  }
  return "";
}

std::string first_bytes(const std::uint8_t* data, std::size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < size && i < 4; ++i) {
    out += i > 0 ? " " : "";
    out += kHex[data[i] >> 4];
    out += kHex[data[i] & 15];
  }
  return out;
}

// The file's format; throws DataError for an empty, oversized or unknown file.
ImageFormat sniff(const std::uint8_t* data, std::size_t size, const std::string& name,
                  const DecodeLimits& limits) {
  if (size == 0) throw runtime::DataError(name + ": empty file, expected a JPEG or PNG image");
  if (static_cast<std::uint64_t>(size) > static_cast<std::uint64_t>(limits.max_file_bytes)) {
    throw runtime::DataError(name + ": " + std::to_string(size) + " bytes, over the limit of " +
                             std::to_string(limits.max_file_bytes) + " for an image file");
  }
  if (starts_with(data, size, kJpegMagic, sizeof kJpegMagic)) return ImageFormat::Jpeg;
  if (starts_with(data, size, kPngMagic, sizeof kPngMagic)) return ImageFormat::Png;
  const std::string other = known_other_format(data, size);
  throw runtime::DataError(name + ": not a JPEG or PNG image (" +
                           (other.empty() ? "starts with bytes " + first_bytes(data, size)
                                          : "looks like " + other + ", which is not supported") +
                           ")");
}

}  // namespace

const char* image_format_name(ImageFormat format) noexcept {
  return format == ImageFormat::Jpeg ? "jpeg" : "png";
}

const char* image_colour_name(ImageColour colour) noexcept {
  switch (colour) {
    case ImageColour::Gray:
      return "gray";
    case ImageColour::Rgb:
      return "rgb";
    case ImageColour::YCbCr:
      return "ycbcr";
    case ImageColour::Cmyk:
      return "cmyk";
    case ImageColour::Ycck:
      return "ycck";
    case ImageColour::Palette:
      return "palette";
  }
  return "?";
}

ImageInfo read_image_info(const std::uint8_t* data, std::size_t size, const std::string& name,
                          const DecodeLimits& limits) {
  return sniff(data, size, name, limits) == ImageFormat::Jpeg
             ? detail::jpeg_image_info(data, size, name, limits)
             : detail::png_image_info(data, size, name, limits);
}

DecodedRegion decode_region(const std::uint8_t* data, std::size_t size, const std::string& name,
                            const PixelBox& box, std::int64_t min_width, std::int64_t min_height,
                            const DecodeLimits& limits) {
  VDNN_EXPECTS(min_width >= 0 && min_height >= 0,
               "decode_region of " + name + ": min_width and min_height must not be negative");
  return sniff(data, size, name, limits) == ImageFormat::Jpeg
             ? detail::decode_jpeg_region(data, size, name, box, min_width, min_height, limits)
             : detail::decode_png_region(data, size, name, box, limits);
}

RgbImage decode_image(const std::uint8_t* data, std::size_t size, const std::string& name,
                      const DecodeLimits& limits) {
  const ImageInfo info = read_image_info(data, size, name, limits);
  return decode_region(data, size, name, PixelBox{0, 0, info.height, info.width}, info.width,
                       info.height, limits)
      .image;
}

namespace detail {

void check_pixel_limit(const std::string& name, std::int64_t width, std::int64_t height,
                       const DecodeLimits& limits) {
  if (width <= 0 || height <= 0) {
    throw runtime::DataError(name + ": the header claims an empty image (" + std::to_string(width) +
                             "x" + std::to_string(height) + ")");
  }
  // Both are below 2^32 (JPEG and PNG store 16 and 31 bits): the product cannot overflow.
  if (width * height > limits.max_pixels) {
    throw runtime::DataError(name + ": the header claims " + std::to_string(width) + "x" +
                             std::to_string(height) + " = " + std::to_string(width * height) +
                             " pixels, over the limit of " + std::to_string(limits.max_pixels) +
                             " (a decompression bomb?)");
  }
}

void check_box(const PixelBox& box, std::int64_t width, std::int64_t height) {
  VDNN_EXPECTS(box.width > 0 && box.height > 0 && box.left >= 0 && box.top >= 0 &&
                   box.left + box.width <= width && box.top + box.height <= height,
               "the box (top " + std::to_string(box.top) + ", left " + std::to_string(box.left) +
                   ", " + std::to_string(box.width) + "x" + std::to_string(box.height) +
                   ") is not a non-empty part of the " + std::to_string(width) + "x" +
                   std::to_string(height) + " image");
}

}  // namespace detail
}  // namespace vdnn::models
