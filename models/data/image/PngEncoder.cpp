// Encodes a PngRaster as a PNG in memory with libpng, writing into a std::vector.
#include "models/data/image/PngEncoder.hpp"

#include <png.h>

#include <cstring>
#include <new>
#include <string>

#include "models/data/image/CodecSupport.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

struct PngWriteState {
  std::jmp_buf jump{};
  char message[256] = {};
  std::vector<std::uint8_t>* out = nullptr;
};

[[noreturn]] void on_error(png_structp png, png_const_charp message) {
  auto& state = *static_cast<PngWriteState*>(png_get_error_ptr(png));
  std::strncpy(state.message, message, sizeof(state.message) - 1);
  std::longjmp(state.jump, 1);
}

void on_warning(png_structp /*png*/, png_const_charp /*message*/) {}

// No exception may cross libpng's C frames: a failed allocation becomes a libpng error.
void write_to_vector(png_structp png, png_bytep data, png_size_t length) {
  auto& state = *static_cast<PngWriteState*>(png_get_io_ptr(png));
  bool failed = false;
  try {
    state.out->insert(state.out->end(), data, data + length);
  } catch (const std::bad_alloc&) {
    failed = true;
  }
  if (failed) png_error(png, "out of memory for the PNG");
}

void flush_nothing(png_structp /*png*/) {}

// libpng's write and info structs, destroyed on every path. Not copyable or movable.
struct PngWriteHandle {
  PngWriteHandle() = default;
  PngWriteHandle(const PngWriteHandle&) = delete;
  PngWriteHandle& operator=(const PngWriteHandle&) = delete;
  ~PngWriteHandle() { png_destroy_write_struct(&png, info != nullptr ? &info : nullptr); }

  PngWriteState state;
  png_structp png = nullptr;
  png_infop info = nullptr;
};

int channels_of(PngColour colour) {
  switch (colour) {
    case PngColour::GrayAlpha:
      return 2;
    case PngColour::Rgb:
      return 3;
    case PngColour::Rgba:
      return 4;
    default:
      return 1;
  }
}

int colour_type_of(PngColour colour) {
  switch (colour) {
    case PngColour::Gray:
      return PNG_COLOR_TYPE_GRAY;
    case PngColour::GrayAlpha:
      return PNG_COLOR_TYPE_GRAY_ALPHA;
    case PngColour::Rgb:
      return PNG_COLOR_TYPE_RGB;
    case PngColour::Rgba:
      return PNG_COLOR_TYPE_RGB_ALPHA;
    default:
      return PNG_COLOR_TYPE_PALETTE;
  }
}

std::size_t row_bytes(const PngRaster& r) {
  return static_cast<std::size_t>(r.width) * channels_of(r.colour) * (r.bit_depth == 16 ? 2 : 1);
}

void check_raster(const PngRaster& r) {
  VDNN_EXPECTS(
      r.width > 0 && r.height > 0 && r.width <= 0x7fffffff && r.height <= 0x7fffffff,
      "encode_png: the image is " + std::to_string(r.width) + "x" + std::to_string(r.height));
  VDNN_EXPECTS(r.samples.size() == row_bytes(r) * static_cast<std::size_t>(r.height),
               "encode_png: " + std::to_string(r.samples.size()) + " sample bytes, expected " +
                   std::to_string(row_bytes(r) * static_cast<std::size_t>(r.height)));
  const bool palette = r.colour == PngColour::Palette;
  VDNN_EXPECTS(!palette || (!r.palette.empty() && r.palette.size() <= 3 * 256 &&
                            r.palette.size() % 3 == 0 && r.palette_alpha.size() <= 256),
               "encode_png: a palette image needs 1 .. 256 RGB entries");
}

void write_header(png_structp png, png_infop info, const PngRaster& r) {
  png_set_IHDR(png, info, static_cast<png_uint_32>(r.width), static_cast<png_uint_32>(r.height),
               r.bit_depth, colour_type_of(r.colour),
               r.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (r.colour == PngColour::Palette) {
    png_set_PLTE(png, info, reinterpret_cast<png_const_colorp>(r.palette.data()),
                 static_cast<int>(r.palette.size() / 3));
    if (!r.palette_alpha.empty()) {
      png_set_tRNS(png, info, r.palette_alpha.data(), static_cast<int>(r.palette_alpha.size()),
                   nullptr);
    }
  }
  png_write_info(png, info);
  if (r.bit_depth < 8) png_set_packing(png);
}

}  // namespace

std::vector<std::uint8_t> encode_png(const PngRaster& raster) {
  check_raster(raster);
  std::vector<std::uint8_t> out;
  PngWriteHandle h;
  h.state.out = &out;
  h.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &h.state, on_error, on_warning);
  if (h.png != nullptr) h.info = png_create_info_struct(h.png);
  if (h.info == nullptr) throw runtime::Error("encode_png: libpng could not start");
  std::vector<png_bytep> rows(static_cast<std::size_t>(raster.height));
  for (std::size_t y = 0; y < rows.size(); ++y) {
    rows[y] = const_cast<png_bytep>(raster.samples.data() + y * row_bytes(raster));
  }
  const bool ok = detail::run_guarded(h.state.jump, [&] {
    png_set_write_fn(h.png, &h.state, write_to_vector, flush_nothing);
    write_header(h.png, h.info, raster);
    png_write_image(h.png, rows.data());
    png_write_end(h.png, nullptr);
  });
  if (!ok) throw runtime::Error(std::string("encode_png: libpng failed: ") + h.state.message);
  return out;
}

std::vector<std::uint8_t> encode_png(const RgbImage& image) {
  PngRaster raster;
  raster.width = image.width;
  raster.height = image.height;
  raster.samples = image.pixels;
  return encode_png(raster);
}

}  // namespace vdnn::models
