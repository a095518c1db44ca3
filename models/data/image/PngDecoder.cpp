// Decodes a PNG's header, or the whole image as 8-bit RGB (libpng's transforms: palette and low
// bit depths expanded, 16 bits cut to their high byte, alpha dropped) with a box cut out of it.
#include "models/data/image/PngDecoder.hpp"

#include <png.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "models/data/image/CodecSupport.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models::detail {
namespace {

// libpng's own width and height limits: PNG's maximum, so that our pixel limit decides.
constexpr png_uint_32 kPngMaxDimension = 0x7fffffff;

struct PngErrors {
  std::jmp_buf jump{};
  char message[256] = {};
};

struct MemorySource {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t offset = 0;
};

[[noreturn]] void on_error(png_structp png, png_const_charp message) {
  auto& errors = *static_cast<PngErrors*>(png_get_error_ptr(png));
  std::strncpy(errors.message, message, sizeof(errors.message) - 1);
  std::longjmp(errors.jump, 1);
}

void on_warning(png_structp /*png*/, png_const_charp /*message*/) {}

void read_from_memory(png_structp png, png_bytep out, png_size_t length) {
  auto& source = *static_cast<MemorySource*>(png_get_io_ptr(png));
  if (length > source.size - source.offset) png_error(png, "unexpected end of file");
  std::memcpy(out, source.data + source.offset, length);
  source.offset += length;
}

// libpng's read and info structs and what they point to, destroyed even when a constructor that
// reads into them throws. Not copyable or movable (libpng keeps pointers into it).
struct PngHandle {
  PngHandle() = default;
  PngHandle(const PngHandle&) = delete;
  PngHandle& operator=(const PngHandle&) = delete;
  ~PngHandle() { png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr); }

  PngErrors errors;
  MemorySource source;
  png_structp png = nullptr;
  png_infop info = nullptr;
};

ImageColour colour_of(int colour_type) {
  if (colour_type == PNG_COLOR_TYPE_PALETTE) return ImageColour::Palette;
  return (colour_type & PNG_COLOR_MASK_COLOR) != 0 ? ImageColour::Rgb : ImageColour::Gray;
}

RgbImage cut(RgbImage&& image, const PixelBox& box) {
  if (box.width == image.width && box.height == image.height) return std::move(image);
  RgbImage out;
  out.width = box.width;
  out.height = box.height;
  out.pixels.resize(static_cast<std::size_t>(box.width * box.height * 3));
  for (std::int64_t y = 0; y < box.height; ++y) {
    const std::uint8_t* src = image.row(box.top + y) + box.left * 3;
    std::copy(src, src + box.width * 3, out.row(y));
  }
  return out;
}

// One PNG file in memory with its header read.
class PngReader {
 public:
  PngReader(const std::uint8_t* data, std::size_t size, const std::string& name,
            const DecodeLimits& limits)
      : name_(name) {
    h_.source = {data, size, 0};
    h_.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &h_.errors, on_error, on_warning);
    if (h_.png != nullptr) h_.info = png_create_info_struct(h_.png);
    if (h_.info == nullptr) throw runtime::DataError(name_ + ": libpng could not start");
    guard([&] {
      png_set_user_limits(h_.png, kPngMaxDimension, kPngMaxDimension);
      // Every ancillary chunk but tRNS is skipped unread (PIL's convert('RGB') uses none of
      // them): libpng would allocate a text or ICC chunk of whatever length it claims, its size
      // limit being only a warning.
      png_set_keep_unknown_chunks(h_.png, PNG_HANDLE_CHUNK_NEVER, nullptr, -1);
      png_set_read_fn(h_.png, &h_.source, read_from_memory);
      png_read_info(h_.png, h_.info);
    });
    width_ = png_get_image_width(h_.png, h_.info);
    height_ = png_get_image_height(h_.png, h_.info);
    check_pixel_limit(name_, width_, height_, limits);
  }

  ImageInfo info() const {
    ImageInfo info;
    info.format = ImageFormat::Png;
    info.width = width_;
    info.height = height_;
    const int colour_type = png_get_color_type(h_.png, h_.info);
    info.colour = colour_of(colour_type);
    info.channels = png_get_channels(h_.png, h_.info);
    info.bit_depth = png_get_bit_depth(h_.png, h_.info);
    info.has_alpha = (colour_type & PNG_COLOR_MASK_ALPHA) != 0 ||
                     png_get_valid(h_.png, h_.info, PNG_INFO_tRNS) != 0;
    info.progressive = png_get_interlace_type(h_.png, h_.info) != PNG_INTERLACE_NONE;
    return info;
  }

  RgbImage decode() {
    set_rgb8_transforms();
    RgbImage image;
    image.width = width_;
    image.height = height_;
    image.pixels.resize(static_cast<std::size_t>(width_ * height_ * 3));
    std::vector<png_bytep> rows(static_cast<std::size_t>(height_));
    for (std::int64_t y = 0; y < height_; ++y) rows[y] = image.row(y);
    guard([&] { png_read_image(h_.png, rows.data()); });
    return image;
  }

 private:
  // Runs `body` (Note [Codec longjmp]); a libpng failure becomes a DataError naming the file.
  template <typename Body>
  void guard(Body&& body) {
    if (run_guarded(h_.errors.jump, body)) return;
    throw runtime::DataError(name_ + ": corrupt PNG (" + h_.errors.message + ")");
  }

  void set_rgb8_transforms() {
    guard([&] {
      const int colour_type = png_get_color_type(h_.png, h_.info);
      if (colour_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(h_.png);
      if (colour_type == PNG_COLOR_TYPE_GRAY || colour_type == PNG_COLOR_TYPE_GRAY_ALPHA) {
        png_set_expand_gray_1_2_4_to_8(h_.png);
        png_set_gray_to_rgb(h_.png);
      }
      png_set_strip_16(h_.png);
      png_set_strip_alpha(h_.png);
      png_set_interlace_handling(h_.png);
      png_read_update_info(h_.png, h_.info);
    });
    if (png_get_rowbytes(h_.png, h_.info) != static_cast<png_size_t>(width_ * 3)) {
      throw runtime::DataError(name_ + ": PNG rows do not convert to 8-bit RGB");
    }
  }

  const std::string& name_;
  PngHandle h_;
  std::int64_t width_ = 0;
  std::int64_t height_ = 0;
};

}  // namespace

ImageInfo png_image_info(const std::uint8_t* data, std::size_t size, const std::string& name,
                         const DecodeLimits& limits) {
  return PngReader(data, size, name, limits).info();
}

DecodedRegion decode_png_region(const std::uint8_t* data, std::size_t size, const std::string& name,
                                const PixelBox& box, const DecodeLimits& limits) {
  PngReader reader(data, size, name, limits);
  const ImageInfo info = reader.info();
  check_box(box, info.width, info.height);
  DecodedRegion region;
  region.image = cut(reader.decode(), box);
  region.height = static_cast<double>(box.height);
  region.width = static_cast<double>(box.width);
  return region;
}

}  // namespace vdnn::models::detail
