// ImageDecoder on JPEGs: header facts, encode -> decode round trips in every colour space, and
// decode_region at each DCT scale it uses (8/8 equal to the full decode's box, smaller scales close
// to its area average), also from many threads at once.
#include "models/data/image/ImageDecoder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <thread>
#include <vector>

#include "models/data/image/CodecTestImages.hpp"
#include "models/data/image/JpegEncoder.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

using test::crop;
using test::decode;
using test::psnr;
using test::test_picture;

std::vector<std::uint8_t> jpeg(const RgbImage& image, ImageColour colour, bool progressive = false,
                               ChromaSampling sampling = ChromaSampling::S420, int quality = 95) {
  JpegEncoding e;
  e.colour = colour;
  e.progressive = progressive;
  e.sampling = sampling;
  e.quality = quality;
  return encode_jpeg(image, e);
}

DecodedRegion region_of(const std::vector<std::uint8_t>& file, const PixelBox& box,
                        std::int64_t min_width, std::int64_t min_height) {
  return decode_region(file.data(), file.size(), "region.jpg", box, min_width, min_height);
}

// One way of storing a JPEG, and how close its decode must be to the picture (or its luma).
struct Storage {
  const char* label;
  ImageColour colour;
  bool progressive;
  ChromaSampling sampling;
  double min_psnr;
};

const Storage kStorages[] = {
    {"ycbcr-420", ImageColour::YCbCr, false, ChromaSampling::S420, 37.0},
    {"ycbcr-422", ImageColour::YCbCr, false, ChromaSampling::S422, 38.0},
    {"ycbcr-444", ImageColour::YCbCr, false, ChromaSampling::S444, 46.0},
    {"progressive-420", ImageColour::YCbCr, true, ChromaSampling::S420, 37.0},
    {"rgb", ImageColour::Rgb, false, ChromaSampling::S444, 55.0},
    {"gray", ImageColour::Gray, false, ChromaSampling::S444, 52.0},
    {"progressive-gray", ImageColour::Gray, true, ChromaSampling::S444, 52.0},
    {"cmyk", ImageColour::Cmyk, false, ChromaSampling::S444, 52.0},
    {"ycck", ImageColour::Ycck, true, ChromaSampling::S444, 37.0},
};

std::vector<std::uint8_t> stored(const RgbImage& image, const Storage& s) {
  return jpeg(image, s.colour, s.progressive, s.sampling);
}

TEST(ImageDecoder, ReadsJpegHeaderFacts) {
  const RgbImage picture = test_picture(203, 157);
  for (const Storage& s : kStorages) {
    const std::vector<std::uint8_t> file = stored(picture, s);
    const ImageInfo info = read_image_info(file.data(), file.size(), "facts.jpg");
    EXPECT_EQ(info.format, ImageFormat::Jpeg) << s.label;
    EXPECT_EQ(info.width, 203) << s.label;
    EXPECT_EQ(info.height, 157) << s.label;
    EXPECT_EQ(info.colour, s.colour) << s.label;
    EXPECT_EQ(info.channels, s.colour == ImageColour::Gray                                    ? 1
                             : s.colour == ImageColour::Cmyk || s.colour == ImageColour::Ycck ? 4
                                                                                              : 3)
        << s.label;
    EXPECT_EQ(info.bit_depth, 8) << s.label;
    EXPECT_EQ(info.progressive, s.progressive) << s.label;
    EXPECT_FALSE(info.has_alpha) << s.label;
  }
}

TEST(ImageDecoder, RoundTripsEveryJpegColourSpace) {
  const RgbImage picture = test_picture(203, 157);
  for (const Storage& s : kStorages) {
    const RgbImage decoded = decode(stored(picture, s));
    const bool gray = s.colour == ImageColour::Gray;
    EXPECT_GE(psnr(decoded, gray ? test::luma(picture) : picture), s.min_psnr) << s.label;
    if (!gray) continue;
    for (std::size_t i = 0; i < decoded.pixels.size(); i += 3) {  // replicated
      ASSERT_EQ(decoded.pixels[i], decoded.pixels[i + 1]) << s.label;
      ASSERT_EQ(decoded.pixels[i], decoded.pixels[i + 2]) << s.label;
    }
  }
}

TEST(ImageDecoder, ProgressiveJpegDecodesToTheBaselinePixels) {
  // Progression reorders the same quantized coefficients: the pixels are identical.
  const RgbImage picture = test_picture(203, 157);
  EXPECT_EQ(decode(jpeg(picture, ImageColour::YCbCr, true)).pixels,
            decode(jpeg(picture, ImageColour::YCbCr, false)).pixels);
}

TEST(ImageDecoder, CmykConvertsAsPilDoes) {
  // Flat colours at quality 100 survive the DCT exactly. (200, 100, 50) is stored Adobe-inverted
  // as (255, 128, 64, 200); PIL's cmyk2rgb of that is r = 200 - 0, g = 200 - MULDIV255(127, 200)
  // = 100, b = 200 - MULDIV255(191, 200) = 50. White is stored as all 255 (no ink).
  for (const std::array<std::uint8_t, 3>& colour :
       {std::array<std::uint8_t, 3>{200, 100, 50}, {255, 255, 255}, {0, 0, 0}, {10, 200, 90}}) {
    RgbImage flat;
    flat.width = 16;
    flat.height = 16;
    for (int i = 0; i < 16 * 16; ++i)
      flat.pixels.insert(flat.pixels.end(), colour.begin(), colour.end());
    const RgbImage decoded =
        decode(jpeg(flat, ImageColour::Cmyk, false, ChromaSampling::S444, 100));
    EXPECT_EQ(decoded.pixels, flat.pixels) << int{colour[0]} << "," << int{colour[1]};
  }
}

// Boxes to decode from a width x height image: the whole, corners, thin strips, and random.
std::vector<PixelBox> boxes_of(std::int64_t width, std::int64_t height, unsigned seed) {
  std::vector<PixelBox> boxes = {{0, 0, height, width},         {0, 0, 1, 1},
                                 {height - 1, width - 1, 1, 1}, {height / 2, 0, 1, width},
                                 {0, width - 3, height, 3},     {9, 17, height - 30, width - 40}};
  std::mt19937 rng(seed);
  for (int i = 0; i < 20; ++i) {
    const std::int64_t h = std::uniform_int_distribution<std::int64_t>(1, height)(rng);
    const std::int64_t w = std::uniform_int_distribution<std::int64_t>(1, width)(rng);
    boxes.push_back({std::uniform_int_distribution<std::int64_t>(0, height - h)(rng),
                     std::uniform_int_distribution<std::int64_t>(0, width - w)(rng), h, w});
  }
  return boxes;
}

TEST(ImageDecoder, RegionAtFullScaleEqualsTheFullDecodesBox) {
  for (const auto& [width, height] :
       {std::pair<std::int64_t, std::int64_t>{203, 157}, {517, 389}}) {
    const RgbImage picture = test_picture(width, height);
    for (const Storage& s : kStorages) {
      const std::vector<std::uint8_t> file = stored(picture, s);
      const RgbImage full = decode(file);
      for (const PixelBox& box : boxes_of(width, height, 7)) {
        const DecodedRegion region = region_of(file, box, box.width, box.height);
        ASSERT_EQ(region.scale_eighths, 8);
        EXPECT_EQ(region.top, 0.0);
        EXPECT_EQ(region.left, 0.0);
        EXPECT_EQ(region.height, static_cast<double>(box.height));
        EXPECT_EQ(region.width, static_cast<double>(box.width));
        ASSERT_EQ(region.image.pixels, crop(full, box).pixels)
            << s.label << " " << width << "x" << height << " box top " << box.top << " left "
            << box.left << " " << box.width << "x" << box.height;
      }
    }
  }
}

// The mean of `full` over the full-resolution footprint of each pixel of `region` (pixel (y, x)
// covers [(y0 + y) * 8 / s, (y0 + y + 1) * 8 / s) with y0 the first scaled row), with fractional
// weights at the footprint's edges.
RgbImage area_average(const RgbImage& full, const DecodedRegion& region, const PixelBox& box) {
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const double f = 8.0 / region.scale_eighths;
  const double y0 = d(box.top) / f - region.top;
  const double x0 = d(box.left) / f - region.left;
  RgbImage out;
  out.width = region.image.width;
  out.height = region.image.height;
  out.pixels.resize(region.image.pixels.size());
  const auto overlap = [](double a0, double a1, double b0, double b1) {
    return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
  };
  for (std::int64_t y = 0; y < out.height; ++y) {
    const double fy0 = (y0 + d(y)) * f, fy1 = std::min(d(full.height), (y0 + d(y) + 1) * f);
    for (std::int64_t x = 0; x < out.width; ++x) {
      const double fx0 = (x0 + d(x)) * f, fx1 = std::min(d(full.width), (x0 + d(x) + 1) * f);
      double sum[3] = {0, 0, 0}, weight = 0;
      for (auto i = static_cast<std::int64_t>(fy0); d(i) < fy1; ++i) {
        for (auto j = static_cast<std::int64_t>(fx0); d(j) < fx1; ++j) {
          const double w = overlap(d(i), d(i) + 1, fy0, fy1) * overlap(d(j), d(j) + 1, fx0, fx1);
          for (int c = 0; c < 3; ++c) sum[c] += w * full.row(i)[3 * j + c];
          weight += w;
        }
      }
      for (int c = 0; c < 3; ++c) {
        out.row(y)[3 * x + c] = static_cast<std::uint8_t>(std::lround(sum[c] / weight));
      }
    }
  }
  return out;
}

TEST(ImageDecoder, RegionAtEachDctScaleIsTheBoxDownscaled) {
  const RgbImage picture = test_picture(517, 389);
  for (const Storage& s : kStorages) {
    const std::vector<std::uint8_t> file = stored(picture, s);
    const RgbImage full = decode(file);
    for (const PixelBox& box :
         {PixelBox{0, 0, 389, 517}, PixelBox{33, 71, 301, 250}, PixelBox{200, 300, 189, 217}}) {
      for (const int scale : {1, 2, 4, 8}) {
        // The smallest scale covering min_width = floor(width * scale / 8) is `scale`.
        const DecodedRegion region = region_of(file, box, box.width * scale / 8, 1);
        ASSERT_EQ(region.scale_eighths, scale) << s.label;
        EXPECT_DOUBLE_EQ(region.width, static_cast<double>(box.width * scale) / 8.0);
        EXPECT_DOUBLE_EQ(region.height, static_cast<double>(box.height * scale) / 8.0);
        EXPECT_GE(region.top, 0.0);
        EXPECT_GE(region.left, 0.0);
        EXPECT_LT(region.top, 1.0);  // the first row is the one holding the box's top edge
        EXPECT_LT(region.left, 1.0);
        EXPECT_LE(region.top + region.height, static_cast<double>(region.image.height));
        EXPECT_LE(region.left + region.width, static_cast<double>(region.image.width));
        EXPECT_GT(region.top + region.height, static_cast<double>(region.image.height - 1));
        EXPECT_GT(region.left + region.width, static_cast<double>(region.image.width - 1));
        // At 1/8 chroma comes from DC terms of 16 x 16 blocks: further from the area average.
        EXPECT_GE(psnr(region.image, area_average(full, region, box)), scale == 1 ? 29.0 : 38.0)
            << s.label << " scale " << scale << "/8, box left " << box.left;
      }
    }
  }
}

TEST(ImageDecoder, ChoosesTheSmallestScaleThatCoversTheMinimum) {
  const std::vector<std::uint8_t> file = jpeg(test_picture(517, 389), ImageColour::YCbCr);
  const PixelBox box{0, 0, 300, 400};
  EXPECT_EQ(region_of(file, box, 0, 0).scale_eighths, 1);
  EXPECT_EQ(region_of(file, box, 50, 37).scale_eighths, 1);   // 400/8, 300/8 = 37.5
  EXPECT_EQ(region_of(file, box, 100, 10).scale_eighths, 2);  // 400 * 2/8 = 100
  EXPECT_EQ(region_of(file, box, 101, 10).scale_eighths, 4);  // 3/8 is not used
  EXPECT_EQ(region_of(file, box, 10, 150).scale_eighths, 4);  // 300 * 4/8 = 150
  EXPECT_EQ(region_of(file, box, 10, 151).scale_eighths, 8);  // 5/8 .. 7/8 are not used
  EXPECT_EQ(region_of(file, box, 400, 300).scale_eighths, 8);
  EXPECT_EQ(region_of(file, box, 1000, 1000).scale_eighths, 8);  // never upscaled
}

TEST(ImageDecoder, RejectsBoxesOutsideTheImage) {
  const std::vector<std::uint8_t> file = jpeg(test_picture(64, 48), ImageColour::YCbCr);
  for (const PixelBox& box : {PixelBox{0, 0, 0, 10}, PixelBox{0, 0, 10, 0}, PixelBox{-1, 0, 4, 4},
                              PixelBox{0, 61, 4, 4}, PixelBox{45, 0, 4, 4}}) {
    EXPECT_THROW(region_of(file, box, 1, 1), runtime::InvalidArgument);
  }
  EXPECT_THROW(region_of(file, {0, 0, 4, 4}, -1, 1), runtime::InvalidArgument);
}

TEST(ImageDecoder, DecodesFromManyThreadsAtOnce) {
  const RgbImage picture = test_picture(517, 389);
  std::vector<std::vector<std::uint8_t>> files;
  for (const Storage& s : kStorages) files.push_back(stored(picture, s));
  const std::vector<PixelBox> boxes = boxes_of(517, 389, 11);
  const auto decode_all = [&] {
    std::vector<std::vector<std::uint8_t>> out;
    for (const auto& file : files) {
      for (const PixelBox& box : boxes) out.push_back(region_of(file, box, 64, 64).image.pixels);
    }
    return out;
  };
  const auto expected = decode_all();
  std::vector<std::vector<std::vector<std::uint8_t>>> results(6);
  std::vector<std::thread> threads;
  for (auto& result : results) threads.emplace_back([&] { result = decode_all(); });
  for (std::thread& t : threads) t.join();
  for (const auto& result : results) EXPECT_TRUE(result == expected);
}

}  // namespace
}  // namespace vdnn::models
