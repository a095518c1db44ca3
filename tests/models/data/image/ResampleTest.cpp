// Resample: PIL's bilinear resize against torchvision and PIL outputs (fixtures from
// tools/torchvision_reference.py), the exact properties that need no fixture (identity, constant
// images, the flip, the eval crop's shortcut), bad arguments, and the plan that the CPU and GPU
// passes both run.
#include "models/data/image/Resample.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "models/data/image/TorchvisionFixtures.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

// lowbias32, as tools/torchvision_reference.py's hash32.
std::uint32_t hash32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  return x ^ (x >> 16);
}

// tools/torchvision_reference.py's test_pixel: three vertical bands of smooth gradients, an
// 8-pixel checkerboard and hashed noise.
std::uint8_t test_pixel(std::int64_t width, std::int64_t height, std::uint32_t seed, std::int64_t x,
                        std::int64_t y, int c) {
  const std::int64_t band = 3 * x / width;
  if (band == 0) {
    const std::int64_t gradients[3] = {x * 255 / (width - 1), y * 255 / (height - 1),
                                       (x + y) * 255 / (width + height - 2)};
    return static_cast<std::uint8_t>(gradients[c]);
  }
  if (band == 1) {
    return static_cast<std::uint8_t>((x / 4 + y / 4) % 2 != 0 ? 230 - 20 * c : 25 + 20 * c);
  }
  const auto key = static_cast<std::uint32_t>(seed * 0x9E3779B1u +
                                              static_cast<std::uint32_t>((y * width + x) * 3 + c));
  return static_cast<std::uint8_t>(hash32(key) & 0xFFu);
}

RgbImage test_image(std::int64_t width, std::int64_t height, std::uint32_t seed) {
  RgbImage image{width, height, std::vector<std::uint8_t>(width * height * 3)};
  for (std::int64_t y = 0; y < height; ++y) {
    for (std::int64_t x = 0; x < width; ++x) {
      for (int c = 0; c < 3; ++c)
        image.row(y)[3 * x + c] = test_pixel(width, height, seed, x, y, c);
    }
  }
  return image;
}

std::string fnv1a64(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const std::uint8_t b : bytes) h = (h ^ b) * 0x100000001B3ull;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

PixelBox whole(std::int64_t width, std::int64_t height) { return {0, 0, height, width}; }

// One fixture case through the Resampler: `image` is its source.
std::vector<std::uint8_t> run_case(Resampler& resampler, const RgbImage& image,
                                   const nlohmann::json& c) {
  const auto width = c.at("out_width").get<std::int64_t>();
  const auto height = c.at("out_height").get<std::int64_t>();
  std::vector<std::uint8_t> out(width * height * 3);
  const std::string kind = c.at("kind");
  if (kind == "eval") {
    const EvalGeometry geometry = eval_resize_crop(image.width, image.height, c.at("size"));
    resampler.resize_centre_crop(image, geometry, out.data());
  } else if (kind == "pil_box") {
    const auto& b = c.at("box");
    resampler.resize(image,
                     {{b[0], b[1], b[2], b[3]},
                      whole(image.width, image.height),
                      width,
                      height,
                      whole(width, height),
                      false},
                     out.data());
  } else {
    EXPECT_EQ(kind, "resized_crop");
    const auto top = c.at("top").get<double>();
    const auto left = c.at("left").get<double>();
    const SourceBox crop{left, top, left + c.at("width").get<double>(),
                         top + c.at("height").get<double>()};
    resampler.resized_crop(image, crop, width, false, out.data());
  }
  return out;
}

TEST(Resample, MatchesTorchvisionAndPilWithinTwoLevels) {
  const nlohmann::json fixture = read_torchvision_json("resample_cases.json");
  ASSERT_TRUE(fixture.is_object()) << "resample_cases.json" << kMakeFixtures;
  std::map<std::string, RgbImage> images;
  for (const nlohmann::json& image : fixture.at("images")) {
    RgbImage made = test_image(image.at("width"), image.at("height"), image.at("seed"));
    ASSERT_EQ(fnv1a64(made.pixels), image.at("fnv1a64").get<std::string>())
        << image.at("name") << ": test_image() is not tools/torchvision_reference.py's";
    images.emplace(image.at("name").get<std::string>(), std::move(made));
  }
  ASSERT_GE(fixture.at("cases").size(), 15u);
  Resampler resampler;
  for (const nlohmann::json& c : fixture.at("cases")) {
    const std::vector<std::uint8_t> reference = read_torchvision_fixture(c.at("file"));
    const std::vector<std::uint8_t> ours = run_case(resampler, images.at(c.at("image")), c);
    ASSERT_EQ(ours.size(), reference.size()) << c.dump();
    int worst = 0;
    std::size_t close = 0;
    std::size_t equal = 0;
    for (std::size_t i = 0; i < ours.size(); ++i) {
      const int diff = std::abs(int{ours[i]} - int{reference[i]});
      worst = std::max(worst, diff);
      close += diff <= 2;
      equal += diff == 0;
    }
    const double fraction = static_cast<double>(close) / static_cast<double>(ours.size());
    EXPECT_GE(fraction, 0.99) << c.dump() << ": " << fraction << " of values within 2 levels, "
                              << equal << " of " << ours.size() << " equal, max diff " << worst;
  }
}

// The test image at 111 x 23: a band each of gradients, checkerboard and noise.
RgbImage banded_image() { return test_image(111, 23, 7); }

TEST(Resample, SameSizeIntegerBoxIsTheIdentity) {
  const RgbImage image = banded_image();
  Resampler resampler;
  std::vector<std::uint8_t> out(image.pixels.size());
  resampler.resize(image, {{0, 0, 111, 23}, whole(111, 23), 111, 23, whole(111, 23), false},
                   out.data());
  EXPECT_EQ(out, image.pixels);
  // A 15 x 15 crop resized to 15 x 15 is the crop.
  std::vector<std::uint8_t> crop(15 * 15 * 3);
  resampler.resized_crop(image, {80, 4, 95, 19}, 15, false, crop.data());
  for (std::int64_t y = 0; y < 15; ++y) {
    for (std::int64_t x = 0; x < 15 * 3; ++x) {
      ASSERT_EQ(crop[y * 45 + x], image.row(4 + y)[80 * 3 + x]) << "at " << y << ", " << x;
    }
  }
}

TEST(Resample, AConstantImageStaysConstant) {
  RgbImage image{90, 70, {}};
  for (std::int64_t i = 0; i < 90 * 70; ++i) image.pixels.insert(image.pixels.end(), {173, 0, 255});
  Resampler resampler;
  std::vector<std::uint8_t> out(224 * 224 * 3);
  for (const SourceBox& box : {SourceBox{0, 0, 90, 70}, SourceBox{3.25, 1.5, 88.75, 41.125},
                               SourceBox{10, 10, 20, 70}, SourceBox{0.5, 60, 90, 61}}) {
    for (const std::int64_t size : {1, 7, 64, 224}) {
      resampler.resized_crop(image, box, size, size == 7, out.data());
      for (std::int64_t i = 0; i < size * size; ++i) {
        ASSERT_EQ(out[3 * i], 173);
        ASSERT_EQ(out[3 * i + 1], 0);
        ASSERT_EQ(out[3 * i + 2], 255);
      }
    }
  }
}

TEST(Resample, FlipMirrorsTheOutput) {
  const RgbImage image = banded_image();
  Resampler resampler;
  for (const SourceBox& box :
       {SourceBox{0, 0, 111, 23}, SourceBox{5, 2, 60, 21}, SourceBox{7.5, 0.25, 19.75, 22.5}}) {
    for (const std::int64_t size : {5, 32}) {
      std::vector<std::uint8_t> plain(size * size * 3);
      std::vector<std::uint8_t> flipped(size * size * 3);
      resampler.resized_crop(image, box, size, false, plain.data());
      resampler.resized_crop(image, box, size, true, flipped.data());
      for (std::int64_t y = 0; y < size; ++y) {
        for (std::int64_t x = 0; x < size; ++x) {
          for (int c = 0; c < 3; ++c) {
            ASSERT_EQ(flipped[(y * size + x) * 3 + c], plain[(y * size + size - 1 - x) * 3 + c])
                << "size " << size << " at " << y << ", " << x;
          }
        }
      }
    }
  }
}

TEST(Resample, AFractionalCropReadsOnlyThePixelsItTouches) {
  // Black in columns 10 .. 29 and rows 5 .. 24, white around: the crop touches only black
  // pixels, while PIL's resize with the same box also blends the white ones beyond its edges.
  RgbImage image{40, 30, std::vector<std::uint8_t>(40 * 30 * 3, 255)};
  for (std::int64_t y = 5; y < 25; ++y) std::fill_n(image.row(y) + 10 * 3, 20 * 3, 0);
  const SourceBox box{10.5, 5.25, 29.5, 24.75};
  Resampler resampler;
  std::vector<std::uint8_t> out(7 * 7 * 3);
  resampler.resized_crop(image, box, 7, false, out.data());
  EXPECT_EQ(out, std::vector<std::uint8_t>(7 * 7 * 3, 0));
  resampler.resize(image, {box, whole(40, 30), 7, 7, whole(7, 7), false}, out.data());
  EXPECT_GT(out[0], 0);
}

TEST(Resample, EvalCropEqualsTheCropOfTheWholeResize) {
  // Both orders of the passes: 300 x 200 shrinks its width most, 97 x 301 its height.
  for (const auto& [width, height] : {std::pair<std::int64_t, std::int64_t>{300, 200}, {97, 301}}) {
    const RgbImage image = test_image(width, height, 11);
    const EvalGeometry g = eval_resize_crop(width, height, 64);
    Resampler resampler;
    std::vector<std::uint8_t> full(g.resized_width * g.resized_height * 3);
    resampler.resize(image,
                     {{0, 0, static_cast<double>(width), static_cast<double>(height)},
                      whole(width, height),
                      g.resized_width,
                      g.resized_height,
                      whole(g.resized_width, g.resized_height),
                      false},
                     full.data());
    std::vector<std::uint8_t> crop(64 * 64 * 3);
    resampler.resize_centre_crop(image, g, crop.data());
    for (std::int64_t y = 0; y < 64; ++y) {
      for (std::int64_t x = 0; x < 64 * 3; ++x) {
        ASSERT_EQ(crop[y * 64 * 3 + x],
                  full[((g.crop.top + y) * g.resized_width + g.crop.left) * 3 + x])
            << width << "x" << height << " at " << y << ", " << x;
      }
    }
  }
}

TEST(Resample, RejectsBadArguments) {
  const RgbImage image = banded_image();
  Resampler resampler;
  std::vector<std::uint8_t> out(64 * 64 * 3);
  const auto resize = [&](const ResizeSpec& spec) { resampler.resize(image, spec, out.data()); };
  const PixelBox all = whole(111, 23);
  EXPECT_THROW(resize({{0, 0, 112, 23}, all, 8, 8, whole(8, 8), false}), runtime::InvalidArgument);
  EXPECT_THROW(resize({{5, 0, 5, 23}, all, 8, 8, whole(8, 8), false}), runtime::InvalidArgument);
  EXPECT_THROW(resize({{0, 0, NAN, 23}, all, 8, 8, whole(8, 8), false}), runtime::InvalidArgument);
  EXPECT_THROW(resize({{0, 0, 50, 23}, {0, 0, 23, 40}, 8, 8, whole(8, 8), false}),
               runtime::InvalidArgument);  // the box leaves the window
  EXPECT_THROW(resize({{0, 0, 50, 23}, {0, 0, 24, 111}, 8, 8, whole(8, 8), false}),
               runtime::InvalidArgument);  // the window leaves the image
  EXPECT_THROW(resize({{0, 0, 50, 23}, all, 0, 8, whole(0, 8), false}), runtime::InvalidArgument);
  EXPECT_THROW(resize({{0, 0, 50, 23}, all, 8, 8, {1, 0, 8, 8}, false}), runtime::InvalidArgument);
  EXPECT_THROW(resampler.resized_crop(image, {-1, 0, 10, 10}, 8, false, out.data()),
               runtime::InvalidArgument);
  EXPECT_THROW(resampler.resized_crop(image, {0, 0, INFINITY, 10}, 8, false, out.data()),
               runtime::InvalidArgument);
  const RgbImage short_pixels{4, 4, std::vector<std::uint8_t>(47)};
  EXPECT_THROW(resampler.resized_crop(short_pixels, {0, 0, 4, 4}, 8, false, out.data()),
               runtime::InvalidArgument);
}

// The plan's contract, run one output byte at a time: each pass sums pixel * weight over a
// filter's taps from 1 << (kWeightBits - 1), shifts and clips. The vertical pass filters rows of
// row_bytes bytes, `in_stride` apart; the horizontal one pixels along `rows` rows.
std::uint8_t clipped(std::int32_t sum) {
  return static_cast<std::uint8_t>(std::min(sum >> kWeightBits, 255));
}

void filter_rows(const AxisFilter& f, const std::uint8_t* in, std::int64_t in_stride,
                 std::int64_t row_bytes, std::uint8_t* out) {
  for (std::size_t r = 0; r < f.start.size(); ++r) {
    for (std::int64_t b = 0; b < row_bytes; ++b) {
      std::int32_t sum = 1 << (kWeightBits - 1);
      for (std::int64_t t = 0; t < f.taps; ++t) {
        sum += in[(f.start[r] + t) * in_stride + b] * f.weights[r * f.taps + t];
      }
      *out++ = clipped(sum);
    }
  }
}

void filter_pixels(const AxisFilter& f, const std::uint8_t* in, std::int64_t in_stride,
                   std::int64_t rows, std::uint8_t* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::size_t x = 0; x < f.start.size(); ++x) {
      for (int c = 0; c < 3; ++c) {
        std::int32_t sum = 1 << (kWeightBits - 1);
        for (std::int64_t t = 0; t < f.taps; ++t) {
          sum += in[r * in_stride + (f.start[x] + t) * 3 + c] * f.weights[x * f.taps + t];
        }
        *out++ = clipped(sum);
      }
    }
  }
}

std::vector<std::uint8_t> run_plan(const RgbImage& src, const ResizePlan& plan) {
  const std::uint8_t* origin = src.row(plan.origin_top) + plan.origin_left * 3;
  const std::int64_t src_stride = src.width * 3;
  const std::int64_t stride = plan.first_pass_row_bytes();
  std::vector<std::uint8_t> first(plan.first_pass_rows() * stride);
  std::vector<std::uint8_t> out(plan.height * plan.width * 3);
  if (plan.vertical_first) {
    filter_rows(plan.vertical, origin, src_stride, stride, first.data());
    filter_pixels(plan.horizontal, first.data(), stride, plan.height, out.data());
  } else {
    filter_pixels(plan.horizontal, origin, src_stride, plan.used, first.data());
    filter_rows(plan.vertical, first.data(), stride, plan.width * 3, out.data());
  }
  return out;
}

SourceBox source_box(const PixelBox& box) {
  return {static_cast<double>(box.left), static_cast<double>(box.top),
          static_cast<double>(box.left + box.width), static_cast<double>(box.top + box.height)};
}

TEST(ResamplePlan, ItsTablesMakeTheResizersOutput) {
  std::vector<std::pair<RgbImage, ResizeSpec>> cases;
  std::mt19937 random(5);
  for (std::uint64_t i = 0; i < 12; ++i) {
    const std::int64_t width = std::uniform_int_distribution<std::int64_t>(40, 300)(random);
    const std::int64_t height = std::uniform_int_distribution<std::int64_t>(40, 300)(random);
    RgbImage image = test_image(width, height, static_cast<std::uint32_t>(i));
    const PixelBox crop = draw_random_resized_crop(3, 0, i, width, height);
    const ResizeSpec train = resized_crop_spec(width, height, source_box(crop), 64, i % 2 == 1);
    const ResizeSpec eval = centre_crop_spec(width, height, eval_resize_crop(width, height, 48));
    cases.emplace_back(image, train);
    cases.emplace_back(std::move(image), eval);
  }
  // Upsampling in both axes, a fractional crop, and a tall image, whose height shrinks most.
  cases.emplace_back(test_image(60, 50, 1),
                     resized_crop_spec(60, 50, {3.5, 2.25, 41, 38.75}, 96, true));
  cases.emplace_back(test_image(97, 301, 2),
                     centre_crop_spec(97, 301, eval_resize_crop(97, 301, 64)));
  Resampler resampler;
  ResizePlan plan;
  int vertical_first = 0;
  for (const auto& [image, spec] : cases) {
    plan_resize(image.width, image.height, spec, plan);
    vertical_first += plan.vertical_first;
    std::vector<std::uint8_t> ours(spec.keep.width * spec.keep.height * 3);
    resampler.resize(image, spec, ours.data());
    ASSERT_EQ(run_plan(image, plan), ours)
        << image.width << " x " << image.height << " to " << spec.width << " x " << spec.height;
  }
  EXPECT_GT(vertical_first, 0);
  EXPECT_LT(vertical_first, static_cast<int>(cases.size()));
}

TEST(ResamplePlan, AnIntegerSameSizeBoxCopiesPixels) {
  ResizePlan plan;
  plan_resize(111, 23, {{0, 0, 111, 23}, whole(111, 23), 111, 23, {2, 10, 5, 20}, true}, plan);
  EXPECT_FALSE(plan.vertical_first);
  EXPECT_EQ(plan.width, 20);
  EXPECT_EQ(plan.height, 5);
  // Each output reads its own pixel, and the next one with weight 0 (PIL's support reaches it).
  for (const AxisFilter* filter : {&plan.horizontal, &plan.vertical}) {
    ASSERT_EQ(filter->taps, 2);
    for (std::size_t i = 0; i < filter->start.size(); ++i) {
      EXPECT_EQ(filter->weights[2 * i], 1 << kWeightBits);
      EXPECT_EQ(filter->weights[2 * i + 1], 0);
    }
  }
  // The first pass makes only the rows that kept rows 2 .. 6 read; the kept columns 10 .. 29
  // are flipped.
  EXPECT_EQ(plan.origin_left, 0);
  EXPECT_EQ(plan.origin_top, 2);
  EXPECT_EQ(plan.used, 6);
  for (std::int64_t y = 0; y < 5; ++y) EXPECT_EQ(plan.vertical.start[y], y);
  for (std::int64_t x = 0; x < 20; ++x) EXPECT_EQ(plan.horizontal.start[x], 29 - x);
}

TEST(ResamplePlan, ARefilledPlanEqualsAFreshOne) {
  const ResizeSpec large = resized_crop_spec(400, 300, {0, 0, 400, 300}, 224, false);
  const ResizeSpec small = centre_crop_spec(50, 120, eval_resize_crop(50, 120, 32));
  ResizePlan reused;
  plan_resize(400, 300, large, reused);
  plan_resize(50, 120, small, reused);
  ResizePlan fresh;
  plan_resize(50, 120, small, fresh);
  for (const auto& [a, b] : {std::pair{&reused.horizontal, &fresh.horizontal},
                             std::pair{&reused.vertical, &fresh.vertical}}) {
    EXPECT_EQ(a->taps, b->taps);
    EXPECT_EQ(a->start, b->start);
    EXPECT_EQ(a->weights, b->weights);
  }
  EXPECT_EQ(reused.vertical_first, fresh.vertical_first);
  EXPECT_EQ(reused.origin_left, fresh.origin_left);
  EXPECT_EQ(reused.origin_top, fresh.origin_top);
  EXPECT_EQ(reused.used, fresh.used);
  EXPECT_EQ(reused.width, fresh.width);
  EXPECT_EQ(reused.height, fresh.height);
  EXPECT_EQ(reused.source_width, 50);
  EXPECT_EQ(reused.source_height, 120);
}

TEST(ResamplePlan, RejectsWhatResizeRejects) {
  ResizePlan plan;
  const ResizeSpec spec{{0, 0, 50, 23}, whole(111, 23), 8, 8, whole(8, 8), false};
  EXPECT_NO_THROW(plan_resize(111, 23, spec, plan));
  EXPECT_THROW(plan_resize(0, 23, spec, plan), runtime::InvalidArgument);
  EXPECT_THROW(plan_resize(110, 23, spec, plan), runtime::InvalidArgument);  // the window leaves
  EXPECT_THROW(
      plan_resize(111, 23, {{0, 0, 50, 23}, whole(111, 23), 8, 8, {0, 1, 8, 8}, false}, plan),
      runtime::InvalidArgument);
  EXPECT_THROW(resized_crop_spec(111, 23, {0, 0, 112, 23}, 8, false), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::models
