// Encodes an RgbImage as a JPEG in memory with libjpeg, writing into a std::vector through a
// destination manager of our own.
#include "models/data/image/JpegEncoder.hpp"

#include <algorithm>
#include <new>
#include <string>

#include "models/data/image/CodecSupport.hpp"
#include "models/data/image/JpegErrors.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

using detail::fail_jpeg;

constexpr std::int64_t kMaxJpegSide = 65500;  // libjpeg's JPEG_MAX_DIMENSION
constexpr std::size_t kFirstChunkBytes = std::size_t{64} << 10;

// A libjpeg destination that grows a vector; a failed growth fails the libjpeg call.
struct VectorDestination {
  jpeg_destination_mgr pub{};  // first: libjpeg's pointer to it is cast back to the whole
  std::vector<std::uint8_t>* out = nullptr;
};

VectorDestination& destination_of(j_compress_ptr cinfo) {
  return *reinterpret_cast<VectorDestination*>(cinfo->dest);
}

// Resizes the output to `bytes` and points libjpeg at everything after `used`. No exception may
// cross libjpeg's C frames, so a failed allocation becomes a libjpeg failure.
void grow(j_compress_ptr cinfo, std::size_t used, std::size_t bytes) noexcept {
  VectorDestination& dest = destination_of(cinfo);
  bool failed = false;
  try {
    dest.out->resize(bytes);
  } catch (const std::bad_alloc&) {
    failed = true;
  }
  if (failed) fail_jpeg(reinterpret_cast<j_common_ptr>(cinfo), "out of memory for the JPEG");
  dest.pub.next_output_byte = dest.out->data() + used;
  dest.pub.free_in_buffer = bytes - used;
}

void init_destination(j_compress_ptr cinfo) noexcept { grow(cinfo, 0, kFirstChunkBytes); }

boolean empty_output_buffer(j_compress_ptr cinfo) noexcept {
  const std::size_t used = destination_of(cinfo).out->size();
  grow(cinfo, used, 2 * used);
  return TRUE;
}

void term_destination(j_compress_ptr cinfo) noexcept {
  VectorDestination& dest = destination_of(cinfo);
  dest.out->resize(dest.out->size() - dest.pub.free_in_buffer);  // shrinking never allocates
}

// libjpeg's compressor, destroyed on every path. Not copyable or movable.
struct Compressor {
  Compressor() { cinfo.err = detail::install_jpeg_errors(errors); }
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;
  ~Compressor() { jpeg_destroy_compress(&cinfo); }

  detail::JpegErrorManager errors;
  jpeg_compress_struct cinfo{};
};

bool is_cmyk(ImageColour colour) {
  return colour == ImageColour::Cmyk || colour == ImageColour::Ycck;
}

J_COLOR_SPACE stored_space(ImageColour colour) {
  switch (colour) {
    case ImageColour::Gray:
      return JCS_GRAYSCALE;
    case ImageColour::Rgb:
      return JCS_RGB;
    case ImageColour::Cmyk:
      return JCS_CMYK;
    case ImageColour::Ycck:
      return JCS_YCCK;
    default:
      return JCS_YCbCr;
  }
}

// Adobe-inverted CMYK (255 = no ink) whose PIL conversion back to RGB is about `rgb`.
void rgb_to_inverted_cmyk(const std::uint8_t* rgb, JSAMPLE* cmyk, std::int64_t pixels) noexcept {
  for (std::int64_t x = 0; x < pixels; ++x, rgb += 3, cmyk += 4) {
    const int k = std::max({rgb[0], rgb[1], rgb[2]});
    for (int c = 0; c < 3; ++c)
      cmyk[c] = static_cast<JSAMPLE>(k == 0 ? 0 : (rgb[c] * 255 + k / 2) / k);
    cmyk[3] = static_cast<JSAMPLE>(k);
  }
}

void set_parameters(jpeg_compress_struct& cinfo, const RgbImage& image, const JpegEncoding& e) {
  cinfo.image_width = static_cast<JDIMENSION>(image.width);
  cinfo.image_height = static_cast<JDIMENSION>(image.height);
  cinfo.input_components = is_cmyk(e.colour) ? 4 : 3;
  cinfo.in_color_space = is_cmyk(e.colour) ? JCS_CMYK : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_colorspace(&cinfo, stored_space(e.colour));
  jpeg_set_quality(&cinfo, e.quality, TRUE);
  if (e.colour == ImageColour::YCbCr) {
    cinfo.comp_info[0].h_samp_factor = e.sampling == ChromaSampling::S444 ? 1 : 2;
    cinfo.comp_info[0].v_samp_factor = e.sampling == ChromaSampling::S420 ? 2 : 1;
  }
  if (e.progressive) jpeg_simple_progression(&cinfo);
}

void check_encoding(const RgbImage& image, const JpegEncoding& e) {
  VDNN_EXPECTS(image.width > 0 && image.height > 0 && image.width <= kMaxJpegSide &&
                   image.height <= kMaxJpegSide,
               "encode_jpeg: the image is " + std::to_string(image.width) + "x" +
                   std::to_string(image.height) + ", expected 1 .. 65500 pixels a side");
  VDNN_EXPECTS(image.pixels.size() == static_cast<std::size_t>(image.width * image.height * 3),
               "encode_jpeg: the pixels do not hold width x height x 3 bytes");
  VDNN_EXPECTS(e.quality >= 1 && e.quality <= 100,
               "encode_jpeg: quality " + std::to_string(e.quality) + ", expected 1 .. 100");
  VDNN_EXPECTS(e.colour != ImageColour::Palette, "encode_jpeg: JPEG has no palette colour");
}

}  // namespace

std::vector<std::uint8_t> encode_jpeg(const RgbImage& image, const JpegEncoding& encoding) {
  check_encoding(image, encoding);
  Compressor c;
  std::vector<std::uint8_t> out;
  VectorDestination dest;
  dest.out = &out;
  dest.pub.init_destination = init_destination;
  dest.pub.empty_output_buffer = empty_output_buffer;
  dest.pub.term_destination = term_destination;
  std::vector<JSAMPLE> cmyk(is_cmyk(encoding.colour) ? static_cast<std::size_t>(image.width) * 4
                                                     : 0);
  jpeg_compress_struct& cinfo = c.cinfo;
  const bool ok = detail::run_guarded(c.errors.jump, [&] {
    jpeg_create_compress(&cinfo);
    cinfo.dest = &dest.pub;
    set_parameters(cinfo, image, encoding);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
      const std::uint8_t* rgb = image.row(cinfo.next_scanline);
      if (!cmyk.empty()) rgb_to_inverted_cmyk(rgb, cmyk.data(), image.width);
      JSAMPROW row = cmyk.empty() ? const_cast<JSAMPLE*>(rgb) : cmyk.data();
      jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
  });
  if (!ok) throw runtime::Error(std::string("encode_jpeg: libjpeg failed: ") + c.errors.message);
  return out;
}

}  // namespace vdnn::models
