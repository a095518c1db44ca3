// ImageDecoder: JPEG and PNG files in memory -> their header facts, or the RGB pixels of a box,
// JPEGs at the smallest DCT scale that still covers the box (issue 25's CPU decode path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "models/data/image/RgbImage.hpp"

namespace vdnn::models {

/// The container, sniffed from the magic bytes (never from the file name).
enum class ImageFormat : std::uint8_t { Jpeg, Png };

/// How the samples are stored. JPEG: Gray, Rgb (Adobe transform 0), YCbCr, Cmyk or Ycck (Adobe
/// inverted CMYK, which PIL assumes for every four-component JPEG). PNG: Gray, Rgb or Palette.
enum class ImageColour : std::uint8_t { Gray, Rgb, YCbCr, Cmyk, Ycck, Palette };

/// "jpeg"/"png"; "gray", "rgb", "ycbcr", "cmyk", "ycck", "palette".
const char* image_format_name(ImageFormat format) noexcept;
const char* image_colour_name(ImageColour colour) noexcept;

/// What the decoders refuse before allocating anything for the pixels.
struct DecodeLimits {
  /// Width x height above this is refused as a decompression bomb: PIL's DecompressionBombError
  /// threshold (2 x Image.MAX_IMAGE_PIXELS).
  std::int64_t max_pixels = 178956970;
  /// Files larger than this are refused unread.
  std::int64_t max_file_bytes = std::int64_t{256} << 20;
  /// Progressive JPEGs with more scans than this are refused (each scan may touch every
  /// coefficient again: a handful of bytes per scan can cost a full pass over the image).
  std::int64_t max_scans = 500;
};

/// A file's header facts.
struct ImageInfo {
  ImageFormat format = ImageFormat::Jpeg;
  std::int64_t width = 0;
  std::int64_t height = 0;
  ImageColour colour = ImageColour::YCbCr;
  /// Stored components: 1 (gray, palette), 2 (gray + alpha), 3 or 4 (RGBA, CMYK, YCCK).
  int channels = 0;
  /// Bits per sample as stored: 8 for JPEG; 1, 2, 4, 8 or 16 for PNG.
  int bit_depth = 8;
  /// PNG: an alpha channel or a tRNS chunk.
  bool has_alpha = false;
  /// JPEG: progressive (SOF2/SOF10); PNG: Adam7 interlaced.
  bool progressive = false;
};

/// The pixels decode_region() returns and where the requested box lies in them. The image's
/// pixel (y, x) stands for full-resolution pixels [y * 8 / scale_eighths, (y + 1) * 8 /
/// scale_eighths) shifted by the cut (the DCT scale maps coordinates by exactly scale_eighths / 8).
struct DecodedRegion {
  RgbImage image;
  /// The DCT scale used, in eighths: 1, 2, 4 or 8 (always 8 for PNG).
  int scale_eighths = 8;
  /// The requested box in `image`'s pixel coordinates (edges, not centres): box.top * scale / 8
  /// minus the first decoded row, and so on. Inside [0, image.height] x [0, image.width].
  double top = 0;
  double left = 0;
  double height = 0;
  double width = 0;
};

/// Reads the header of a JPEG or PNG file of `size` bytes at `data` (not owned, not kept).
/// `name` only labels errors. Throws runtime::DataError naming `name` and what was wrong for an
/// empty file, a file over limits.max_file_bytes, anything but JPEG/PNG (the message names GIF,
/// BMP, WebP or TIFF when it sees their magic), a corrupt or unsupported header (12-bit or
/// lossless JPEG, two-component JPEG), or width x height over limits.max_pixels. Pure: any
/// thread, concurrently.
ImageInfo read_image_info(const std::uint8_t* data, std::size_t size, const std::string& name,
                          const DecodeLimits& limits = {});

/// Decodes the pixels of `box` (full-resolution coordinates; it must be non-empty and inside the
/// image, else runtime::InvalidArgument) as 8-bit RGB. A JPEG is decoded at the smallest DCT scale
/// of 1/8, 2/8, 4/8 and 8/8 at which the box still spans at least min_width x min_height pixels
/// (8/8 when none does; libjpeg-turbo's other eighths run plain-C IDCTs slower than 8/8), reading
/// only the rows the box needs and, through jpeg_crop_scanline, only about its columns; at 8/8 the
/// pixels equal a full decode's box exactly (libjpeg's defaults: JDCT_ISLOW, fancy upsampling, as
/// PIL decodes). A PNG is decoded whole and the box cut out.
///
/// Colour: gray is replicated; CMYK and YCCK JPEGs are read as Adobe-inverted CMYK (c, m, y, k:
/// 255 = no ink) and converted as PIL's convert('RGB') does (r = k - k * (255 - c) / 255 with
/// PIL's rounding), exactly. PNG: 16-bit samples keep their high byte (PIL's "RGB;16B"), palettes
/// are expanded, and alpha (an alpha channel or tRNS) is dropped, not composited: what PIL's
/// convert('RGB') gives, so torchvision's default loader sees the same pixels.
///
/// Throws runtime::DataError naming `name` as read_image_info does, and for corrupt or truncated
/// pixel data: every libjpeg warning that means lost pixels (premature end of file, bad Huffman
/// code, corrupt data segment, ...) is an error, as PIL refuses truncated files; those that do
/// not (extraneous bytes before a marker, odd SOS parameters of phone cameras) are ignored. Rows
/// below the box are not decoded: a JPEG whose data is corrupt only there decodes, but one that is
/// cut short is refused (its end-of-image marker is missing). Pure: any thread, concurrently.
DecodedRegion decode_region(const std::uint8_t* data, std::size_t size, const std::string& name,
                            const PixelBox& box, std::int64_t min_width, std::int64_t min_height,
                            const DecodeLimits& limits = {});

/// The whole image at full resolution: decode_region() of its full box at scale 8/8.
RgbImage decode_image(const std::uint8_t* data, std::size_t size, const std::string& name,
                      const DecodeLimits& limits = {});

}  // namespace vdnn::models
