// ImageDecoder on PNGs of every colour type and bit depth (written with libpng through
// PngEncoder): header facts and the 8-bit RGB pixels PIL's convert('RGB') would give.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/data/image/CodecTestImages.hpp"
#include "models/data/image/ImageDecoder.hpp"
#include "models/data/image/PngEncoder.hpp"

namespace vdnn::models {
namespace {

using test::crop;
using test::test_picture;

// A raster of `colour` and `depth` whose sample (y, x, channel) is `sample(y, x, channel)`.
template <typename Sample>
PngRaster raster(PngColour colour, int depth, int channels, Sample sample) {
  PngRaster r;
  r.width = 37;
  r.height = 23;
  r.colour = colour;
  r.bit_depth = depth;
  for (std::int64_t y = 0; y < r.height; ++y) {
    for (std::int64_t x = 0; x < r.width; ++x) {
      for (int c = 0; c < channels; ++c) {
        const unsigned v = sample(y, x, c);
        if (depth == 16) r.samples.push_back(static_cast<std::uint8_t>(v >> 8));
        r.samples.push_back(static_cast<std::uint8_t>(v & 0xFF));
      }
    }
  }
  return r;
}

// 8-bit RGB with pixel (y, x) = rgb(y, x, channel).
template <typename Rgb>
RgbImage expected(Rgb rgb) {
  RgbImage image;
  image.width = 37;
  image.height = 23;
  for (std::int64_t y = 0; y < 23; ++y) {
    for (std::int64_t x = 0; x < 37; ++x) {
      for (int c = 0; c < 3; ++c) image.pixels.push_back(static_cast<std::uint8_t>(rgb(y, x, c)));
    }
  }
  return image;
}

unsigned wave(std::int64_t y, std::int64_t x, int c) {
  return static_cast<unsigned>((x * 7 + y * 11 + c * 85) % 256);
}

ImageInfo info_of(const std::vector<std::uint8_t>& file) {
  return read_image_info(file.data(), file.size(), "test.png");
}

TEST(PngDecoder, DecodesEightBitRgbExactly) {
  const RgbImage picture = test_picture(203, 157);
  const std::vector<std::uint8_t> file = encode_png(picture);
  const ImageInfo info = info_of(file);
  EXPECT_EQ(info.format, ImageFormat::Png);
  EXPECT_EQ(info.width, 203);
  EXPECT_EQ(info.height, 157);
  EXPECT_EQ(info.colour, ImageColour::Rgb);
  EXPECT_EQ(info.channels, 3);
  EXPECT_EQ(info.bit_depth, 8);
  EXPECT_FALSE(info.has_alpha);
  EXPECT_FALSE(info.progressive);
  EXPECT_EQ(test::decode(file, "test.png").pixels, picture.pixels);
}

TEST(PngDecoder, IgnoresAncillaryChunks) {
  const RgbImage picture = test_picture(64, 48);
  std::string text = "Comment";  // keyword, NUL, text
  text += '\0';
  text += "made by a test";
  std::vector<std::uint8_t> file =
      test::with_png_chunk(encode_png(picture), "tEXt", {text.begin(), text.end()});
  file = test::with_png_chunk(file, "gAMA", {0, 0, 0xB1, 0x8F});  // 1 / 2.2: not applied
  file = test::with_png_chunk(file, "vpAg", {1, 2, 3});           // unknown, ancillary
  EXPECT_EQ(test::decode(file, "test.png").pixels, picture.pixels);
}

TEST(PngDecoder, CutsTheBoxOutOfTheWholeImage) {
  const RgbImage picture = test_picture(203, 157);
  const std::vector<std::uint8_t> file = encode_png(picture);
  const PixelBox box{17, 29, 100, 61};
  const DecodedRegion region = decode_region(file.data(), file.size(), "test.png", box, 10, 10);
  EXPECT_EQ(region.scale_eighths, 8);
  EXPECT_EQ(region.top, 0.0);
  EXPECT_EQ(region.left, 0.0);
  EXPECT_EQ(region.height, 100.0);
  EXPECT_EQ(region.width, 61.0);
  EXPECT_EQ(region.image.pixels, crop(picture, box).pixels);
}

TEST(PngDecoder, DropsAlphaAsPilDoes) {
  const PngRaster rgba = raster(PngColour::Rgba, 8, 4, [](auto y, auto x, int c) {
    return c == 3 ? static_cast<unsigned>(x * 6) : wave(y, x, c);  // alpha 0 .. 216
  });
  const std::vector<std::uint8_t> file = encode_png(rgba);
  EXPECT_EQ(info_of(file).channels, 4);
  EXPECT_TRUE(info_of(file).has_alpha);
  EXPECT_EQ(test::decode(file, "test.png").pixels, expected(wave).pixels);
  const PngRaster gray_alpha = raster(PngColour::GrayAlpha, 8, 2, [](auto y, auto x, int c) {
    return c == 1 ? 0u : wave(y, x, 0);  // fully transparent: the gray values still show
  });
  EXPECT_EQ(test::decode(encode_png(gray_alpha), "test.png").pixels,
            expected([](auto y, auto x, int) { return wave(y, x, 0); }).pixels);
}

TEST(PngDecoder, ExpandsPalettesWithAndWithoutTransparency) {
  PngRaster r = raster(PngColour::Palette, 8, 1,
                       [](auto y, auto x, int) { return static_cast<unsigned>((x + y) % 5); });
  r.palette = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30, 200, 100, 50};
  const auto colours = [&r](auto y, auto x, int c) { return r.palette[3 * ((x + y) % 5) + c]; };
  const ImageInfo info = info_of(encode_png(r));
  EXPECT_EQ(info.colour, ImageColour::Palette);
  EXPECT_EQ(info.channels, 1);
  EXPECT_FALSE(info.has_alpha);
  EXPECT_EQ(test::decode(encode_png(r), "test.png").pixels, expected(colours).pixels);
  r.palette_alpha = {0, 128, 255};
  EXPECT_TRUE(info_of(encode_png(r)).has_alpha);
  EXPECT_EQ(test::decode(encode_png(r), "test.png").pixels, expected(colours).pixels);
}

TEST(PngDecoder, ReplicatesGrayOfEveryBitDepth) {
  for (const int depth : {1, 2, 4, 8, 16}) {
    const unsigned top = (1u << depth) - 1;
    const unsigned step = depth == 16 ? 701 : 1;  // 16 bits: high bytes that vary
    const auto gray = [top, step](auto y, auto x, int) {
      return static_cast<unsigned>((x + 3 * y) * step % (top + 1));
    };
    const std::vector<std::uint8_t> file = encode_png(raster(PngColour::Gray, depth, 1, gray));
    const ImageInfo info = info_of(file);
    EXPECT_EQ(info.colour, ImageColour::Gray);
    EXPECT_EQ(info.bit_depth, depth);
    // Low depths scale to 0 .. 255 (v * 255 / top); 16 bits keep the high byte.
    const RgbImage want = expected([&](auto y, auto x, int c) {
      const unsigned v = gray(y, x, c);
      return depth == 16 ? v >> 8 : v * 255 / top;
    });
    EXPECT_EQ(test::decode(file, "test.png").pixels, want.pixels) << depth << " bits";
  }
}

TEST(PngDecoder, KeepsTheHighByteOfSixteenBitRgb) {
  const auto sample = [](auto y, auto x, int c) { return wave(y, x, c) * 257 + 77; };
  const std::vector<std::uint8_t> file = encode_png(raster(PngColour::Rgb, 16, 3, sample));
  EXPECT_EQ(info_of(file).bit_depth, 16);
  EXPECT_EQ(test::decode(file, "test.png").pixels,
            expected([&](auto y, auto x, int c) { return sample(y, x, c) >> 8; }).pixels);
}

TEST(PngDecoder, DecodesInterlacedPngs) {
  PngRaster r = raster(PngColour::Rgb, 8, 3, wave);
  r.interlaced = true;
  const std::vector<std::uint8_t> file = encode_png(r);
  EXPECT_TRUE(info_of(file).progressive);
  EXPECT_EQ(test::decode(file, "test.png").pixels, expected(wave).pixels);
}

}  // namespace
}  // namespace vdnn::models
