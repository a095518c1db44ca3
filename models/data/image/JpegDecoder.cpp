// Decodes a JPEG's header, or the pixels of a box of it: at the smallest DCT scale covering the
// box, only its rows (jpeg_skip_scanlines) and about its columns (jpeg_crop_scanline).
#include "models/data/image/JpegDecoder.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "models/data/image/CodecSupport.hpp"
#include "models/data/image/JpegErrors.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models::detail {
namespace {

// Decoded pixels beyond the box on each side: upsampling makes a crop's outermost pixels depend
// on samples outside it, so these are decoded and dropped, keeping the box equal to a full
// decode's.
constexpr JDIMENSION kEdgeMargin = 2;

// PIL's MULDIV255: a * b / 255, rounded as Pillow's Convert.c does.
inline int muldiv255(int a, int b) noexcept {
  const int t = a * b + 128;
  return ((t >> 8) + t) >> 8;
}

// Adobe-inverted CMYK (255 = no ink) to RGB as PIL's "CMYK;I" rawmode and cmyk2rgb do: PIL
// un-inverts to c = 255 - c', k = 255 - k', then r = (255 - k) - (c * (255 - k)) / 255.
void inverted_cmyk_to_rgb(const JSAMPLE* cmyk, std::uint8_t* rgb, JDIMENSION pixels) noexcept {
  for (JDIMENSION x = 0; x < pixels; ++x, cmyk += 4, rgb += 3) {
    const int nk = cmyk[3];
    for (int c = 0; c < 3; ++c) {
      rgb[c] = static_cast<std::uint8_t>(std::clamp(nk - muldiv255(255 - cmyk[c], nk), 0, 255));
    }
  }
}

void copy_rgb(const JSAMPLE* src, std::uint8_t* rgb, JDIMENSION pixels) noexcept {
  std::memcpy(rgb, src, static_cast<std::size_t>(pixels) * 3);
}

using RowConverter = void (*)(const JSAMPLE*, std::uint8_t*, JDIMENSION) noexcept;

// The colour of a JPEG colour space; none for those vdnn does not decode (2 components, ...).
std::optional<ImageColour> colour_of(J_COLOR_SPACE space) {
  switch (space) {
    case JCS_GRAYSCALE:
      return ImageColour::Gray;
    case JCS_RGB:
      return ImageColour::Rgb;
    case JCS_YCbCr:
      return ImageColour::YCbCr;
    case JCS_CMYK:
      return ImageColour::Cmyk;
    case JCS_YCCK:
      return ImageColour::Ycck;
    default:
      return std::nullopt;
  }
}

// The rows and columns of the scaled image that hold the box: [x0, x1) x [y0, y1).
struct ScaledSpan {
  JDIMENSION x0 = 0, x1 = 0, y0 = 0, y1 = 0;
};

ScaledSpan span_of(const PixelBox& box, int scale, JDIMENSION width, JDIMENSION height) {
  const auto lo = [scale](std::int64_t v) { return static_cast<JDIMENSION>(v * scale / 8); };
  const auto hi = [scale](std::int64_t v, JDIMENSION limit) {
    return std::min(limit, static_cast<JDIMENSION>((v * scale + 7) / 8));
  };
  return {lo(box.left), hi(box.left + box.width, width), lo(box.top),
          hi(box.top + box.height, height)};
}

// The DCT scales (eighths) decode_region uses below 8/8: those libjpeg-turbo's SIMD code
// accelerates. Its 3/8, 5/8, 6/8 and 7/8 IDCTs are plain C: on make-images JPEGs a whole-image
// decode at 5/8 .. 7/8 took 1.2 to 1.9 times as long as at 8/8, and 3/8 no less than 4/8.
constexpr int kReducedScales[] = {1, 2, 4};

// The smallest scale at which the box spans min_width x min_height pixels; 8 when none does.
int choose_scale(const PixelBox& box, std::int64_t min_width, std::int64_t min_height) {
  for (const int s : kReducedScales) {
    if (box.width * s >= min_width * 8 && box.height * s >= min_height * 8) return s;
  }
  return 8;
}

// Whether the data holds an end-of-image marker after what libjpeg has read so far: a file cut
// short lacks it. Entropy-coded data never holds 0xFF 0xD9 (0xFF is stuffed as 0xFF 0x00).
bool end_marker_follows(const jpeg_decompress_struct& cinfo) {
  if (cinfo.unread_marker == JPEG_EOI) return true;
  const JOCTET* p = cinfo.src->next_input_byte;
  const JOCTET* end = p + cinfo.src->bytes_in_buffer;
  for (; p + 1 < end; ++p) {
    if (p[0] == 0xFF && p[1] == 0xD9) return true;
  }
  return false;
}

void check_scan_count(j_common_ptr common) noexcept {
  const auto* cinfo = reinterpret_cast<j_decompress_ptr>(common);
  const auto max_scans = *static_cast<const std::int64_t*>(cinfo->client_data);
  if (cinfo->input_scan_number > max_scans) {
    char message[JMSG_LENGTH_MAX];
    std::snprintf(message, sizeof message, "more than %lld scans (the limit)",
                  static_cast<long long>(max_scans));
    fail_jpeg(common, message);
  }
}

// libjpeg's decompressor and what it points to, destroyed even when a constructor that reads
// into it throws. Not copyable or movable (libjpeg keeps pointers into it).
struct Decompressor {
  explicit Decompressor(std::int64_t scan_limit) : max_scans(scan_limit) {
    cinfo.err = install_jpeg_errors(errors);
    cinfo.client_data = &max_scans;
    progress.progress_monitor = check_scan_count;
  }
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  ~Decompressor() { jpeg_destroy_decompress(&cinfo); }  // valid on a zeroed or failed struct

  std::int64_t max_scans;
  JpegErrorManager errors;
  jpeg_progress_mgr progress{};
  jpeg_decompress_struct cinfo{};
};

// One JPEG file in memory with its header read.
class JpegReader {
 public:
  JpegReader(const std::uint8_t* data, std::size_t size, const std::string& name,
             const DecodeLimits& limits)
      : name_(name), d_(limits.max_scans), cinfo_(d_.cinfo) {
    guard([&] {
      jpeg_create_decompress(&cinfo_);
      cinfo_.progress = &d_.progress;
      jpeg_mem_src(&cinfo_, data, static_cast<unsigned long>(size));
      jpeg_read_header(&cinfo_, TRUE);
    });
    if (!colour_of(cinfo_.jpeg_color_space)) {
      throw runtime::DataError(name_ + ": unsupported JPEG with " +
                               std::to_string(cinfo_.num_components) +
                               " components (expected gray, RGB/YCbCr or CMYK/YCCK)");
    }
    check_pixel_limit(name_, cinfo_.image_width, cinfo_.image_height, limits);
  }

  ImageInfo info() const {
    ImageInfo info;
    info.format = ImageFormat::Jpeg;
    info.width = cinfo_.image_width;
    info.height = cinfo_.image_height;
    info.colour = *colour_of(cinfo_.jpeg_color_space);
    info.channels = cinfo_.num_components;
    info.bit_depth = cinfo_.data_precision;
    info.progressive = cinfo_.progressive_mode != 0;
    return info;
  }

  DecodedRegion decode(const PixelBox& box, std::int64_t min_width, std::int64_t min_height) {
    check_box(box, cinfo_.image_width, cinfo_.image_height);
    DecodedRegion region;
    region.scale_eighths = choose_scale(box, min_width, min_height);
    start(region.scale_eighths);
    const ScaledSpan span =
        span_of(box, region.scale_eighths, cinfo_.output_width, cinfo_.output_height);
    const JDIMENSION first_column = crop_and_skip(span);
    region.image.width = span.x1 - span.x0;
    region.image.height = span.y1 - span.y0;
    region.image.pixels.resize(static_cast<std::size_t>(region.image.width) *
                               static_cast<std::size_t>(region.image.height) * 3);
    read_rows(span, first_column, region.image);
    check_end();
    const double scale = region.scale_eighths / 8.0;
    region.top = static_cast<double>(box.top) * scale - span.y0;
    region.left = static_cast<double>(box.left) * scale - span.x0;
    region.height = static_cast<double>(box.height) * scale;
    region.width = static_cast<double>(box.width) * scale;
    return region;
  }

 private:
  // Runs `body` (Note [Codec longjmp]); a libjpeg failure becomes a DataError naming the file.
  template <typename Body>
  void guard(Body&& body) {
    if (run_guarded(d_.errors.jump, body)) return;
    const std::string what = d_.errors.truncated ? "truncated JPEG (" : "corrupt JPEG (";
    throw runtime::DataError(name_ + ": " + what + d_.errors.message + ")");
  }

  void start(int scale) {
    guard([&] {
      cinfo_.scale_num = static_cast<unsigned int>(scale);
      cinfo_.scale_denom = 8;
      cinfo_.dct_method = JDCT_ISLOW;
      cinfo_.do_fancy_upsampling = TRUE;
      const bool four = cinfo_.jpeg_color_space == JCS_CMYK || cinfo_.jpeg_color_space == JCS_YCCK;
      cinfo_.out_color_space = four ? JCS_CMYK : JCS_RGB;
      jpeg_start_decompress(&cinfo_);
    });
  }

  // PIL refuses a file cut short anywhere: after every row, libjpeg reads on to the end-of-image
  // marker (warning on extraneous or missing data); after the box's rows, the rest of the data
  // must hold that marker.
  void check_end() {
    if (cinfo_.output_scanline == cinfo_.output_height) {
      guard([&] { jpeg_finish_decompress(&cinfo_); });
    } else if (!jpeg_input_complete(&cinfo_) && !end_marker_follows(cinfo_)) {
      throw runtime::DataError(name_ + ": truncated JPEG (no end-of-image marker after the data)");
    }
  }

  // Crops the scanlines to about the span's columns and skips to about its first row; returns
  // the first decoded column (on an iMCU boundary).
  JDIMENSION crop_and_skip(const ScaledSpan& span) {
    JDIMENSION x0 = span.x0 > kEdgeMargin ? span.x0 - kEdgeMargin : 0;
    JDIMENSION width = std::min(cinfo_.output_width, span.x1 + kEdgeMargin) - x0;
    const JDIMENSION y0 = span.y0 > kEdgeMargin ? span.y0 - kEdgeMargin : 0;
    guard([&] {
      if (width < cinfo_.output_width) jpeg_crop_scanline(&cinfo_, &x0, &width);
      if (y0 > 0) jpeg_skip_scanlines(&cinfo_, y0);
    });
    if (cinfo_.output_scanline != y0 || x0 > span.x0 || x0 + width < span.x1) {
      throw runtime::DataError(name_ + ": libjpeg did not crop or skip as asked");
    }
    return x0;
  }

  // Reads rows up to span.y1 - 1 of the scanlines that start at `first_column` and writes the
  // span's pixels of them to `image`.
  void read_rows(const ScaledSpan& span, JDIMENSION first_column, RgbImage& image) {
    const JDIMENSION rows_per_call = std::max(1, cinfo_.rec_outbuf_height);
    const std::size_t row_bytes =
        static_cast<std::size_t>(cinfo_.output_width) * cinfo_.output_components;
    std::vector<JSAMPLE> scratch(row_bytes * rows_per_call);
    std::vector<JSAMPROW> rows(rows_per_call);
    for (JDIMENSION r = 0; r < rows_per_call; ++r) rows[r] = scratch.data() + r * row_bytes;
    const RowConverter convert =
        cinfo_.out_color_space == JCS_CMYK ? inverted_cmyk_to_rgb : copy_rgb;
    const std::size_t skip_bytes =
        static_cast<std::size_t>(span.x0 - first_column) * cinfo_.output_components;
    const JDIMENSION pixels = span.x1 - span.x0;
    guard([&] {
      while (cinfo_.output_scanline < span.y1) {
        const JDIMENSION first = cinfo_.output_scanline;
        const JDIMENSION got = jpeg_read_scanlines(&cinfo_, rows.data(), rows_per_call);
        if (got == 0) fail_jpeg(reinterpret_cast<j_common_ptr>(&cinfo_), "no scanline decoded");
        for (JDIMENSION r = 0; r < got; ++r) {
          const JDIMENSION y = first + r;
          if (y >= span.y0 && y < span.y1)
            convert(rows[r] + skip_bytes, image.row(y - span.y0), pixels);
        }
      }
    });
  }

  const std::string& name_;
  Decompressor d_;
  jpeg_decompress_struct& cinfo_;
};

}  // namespace

ImageInfo jpeg_image_info(const std::uint8_t* data, std::size_t size, const std::string& name,
                          const DecodeLimits& limits) {
  return JpegReader(data, size, name, limits).info();
}

DecodedRegion decode_jpeg_region(const std::uint8_t* data, std::size_t size,
                                 const std::string& name, const PixelBox& box,
                                 std::int64_t min_width, std::int64_t min_height,
                                 const DecodeLimits& limits) {
  JpegReader reader(data, size, name, limits);
  return reader.decode(box, min_width, min_height);
}

}  // namespace vdnn::models::detail
