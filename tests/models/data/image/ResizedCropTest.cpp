// ResizedCrop: the RandomResizedCrop boxes against torchvision's distribution (quantiles of area
// and aspect from tools/torchvision_reference.py), their purity and fallback, the flip, and the
// eval geometry against hand-computed cases.
#include "models/data/image/ResizedCrop.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <vector>

#include "models/data/image/TorchvisionFixtures.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

constexpr std::uint64_t kSeed = 20250125;

bool inside(const PixelBox& box, std::int64_t width, std::int64_t height) {
  return box.top >= 0 && box.left >= 0 && box.height > 0 && box.width > 0 &&
         box.top + box.height <= height && box.left + box.width <= width;
}

// How far a quantile of ours may sit from torchvision's, in probability: our empirical CDF at
// torchvision's q-quantile is q plus the sampling errors of both sides, each of standard deviation
// sqrt(q (1 - q) / n) (n = 100,000: 0.0016 at the median, 0.0003 at q = 0.01). Five standard
// deviations of their difference leave about one false alarm in a million per check, while a
// wrong range, distribution or rounding of the sides moves some quantile by far more.
double quantile_tolerance(double q, double n) { return 5.0 * std::sqrt(2.0 * q * (1.0 - q) / n); }

// Checks that torchvision's quantiles `reference` (at levels `levels`) are quantiles of `ours`
// within the tolerance: the fraction of ours below a reference value (a little below, for ties
// in these discrete values) is at most q + tol, the fraction at or below it at least q - tol.
void expect_same_quantiles(std::vector<double> ours, const nlohmann::json& reference,
                           const nlohmann::json& levels, const std::string& what) {
  std::sort(ours.begin(), ours.end());
  const auto n = static_cast<double>(ours.size());
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const double q = levels[i].get<double>();
    const double value = reference[i].get<double>();
    const double below = static_cast<double>(
        std::lower_bound(ours.begin(), ours.end(), value - 1e-12) - ours.begin());
    const double at_or_below = static_cast<double>(
        std::upper_bound(ours.begin(), ours.end(), value + 1e-12) - ours.begin());
    const double tol = quantile_tolerance(q, n);
    EXPECT_LE(below / n, q + tol) << what << ": torchvision's " << q << "-quantile " << value;
    EXPECT_GE(at_or_below / n, q - tol) << what << ": torchvision's " << q << "-quantile " << value;
  }
}

TEST(ResizedCrop, BoxesFollowTorchvisionsDistribution) {
  const nlohmann::json fixture = read_torchvision_json("crop_quantiles.json");
  ASSERT_TRUE(fixture.is_object()) << "crop_quantiles.json" << kMakeFixtures;
  const auto draws = fixture.at("draws").get<std::uint64_t>();
  ASSERT_EQ(fixture.at("sizes").size(), 6u);
  for (const nlohmann::json& size : fixture.at("sizes")) {
    const auto width = size.at("width").get<std::int64_t>();
    const auto height = size.at("height").get<std::int64_t>();
    const auto fallback_json = size.at("fallback_box");
    const PixelBox fallback{fallback_json[0], fallback_json[1], fallback_json[2], fallback_json[3]};
    const std::string what = std::to_string(width) + "x" + std::to_string(height);
    std::vector<double> area(draws);
    std::vector<double> log_aspect(draws);
    std::uint64_t fallbacks = 0;
    for (std::uint64_t i = 0; i < draws; ++i) {
      const PixelBox box = draw_random_resized_crop(kSeed, 3, i, width, height);
      ASSERT_TRUE(inside(box, width, height)) << what << " sample " << i;
      area[i] = static_cast<double>(box.height * box.width) / static_cast<double>(width * height);
      log_aspect[i] = std::log(static_cast<double>(box.width) / static_cast<double>(box.height));
      fallbacks += box == fallback;
    }
    expect_same_quantiles(area, size.at("area_fraction"), fixture.at("quantiles"),
                          what + " area fraction");
    expect_same_quantiles(log_aspect, size.at("log_aspect"), fixture.at("quantiles"),
                          what + " log aspect");
    const double ours = static_cast<double>(fallbacks) / static_cast<double>(draws);
    const double theirs = size.at("fallback_fraction").get<double>();
    // Binomial, same bound as the quantiles, plus one draw for the rare events near zero.
    const double tol = quantile_tolerance((ours + theirs) / 2.0, static_cast<double>(draws)) +
                       1.0 / static_cast<double>(draws);
    EXPECT_NEAR(ours, theirs, tol) << what << " fraction of fallback boxes";
  }
}

TEST(ResizedCrop, BoxesStayInsideEveryImage) {
  for (const auto& [width, height] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {2, 1}, {1, 700}, {3, 2}, {13, 9}, {640, 480}, {4000, 3}, {224, 224}}) {
    for (std::uint64_t i = 0; i < 2000; ++i) {
      const PixelBox box = draw_random_resized_crop(kSeed, 0, i, width, height);
      ASSERT_TRUE(inside(box, width, height)) << width << "x" << height << " sample " << i;
    }
  }
}

TEST(ResizedCrop, DrawsArePureFunctionsOfSeedEpochAndIndex) {
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> boxes;
  constexpr int kSamples = 1000;
  for (int i = 0; i < kSamples; ++i) {
    const auto index = static_cast<std::uint64_t>(i);
    const PixelBox box = draw_random_resized_crop(kSeed, 5, index, 500, 375);
    EXPECT_EQ(box, draw_random_resized_crop(kSeed, 5, index, 500, 375));
    EXPECT_EQ(draw_flip(kSeed, 5, index), draw_flip(kSeed, 5, index));
    boxes.emplace(box.top, box.left, box.height, box.width);
  }
  // Boxes of a 500x375 image almost never repeat.
  EXPECT_GE(boxes.size(), kSamples - 5u);
  int same_epoch = 0;
  int same_seed = 0;
  for (int i = 0; i < kSamples; ++i) {
    const auto index = static_cast<std::uint64_t>(i);
    const PixelBox box = draw_random_resized_crop(kSeed, 5, index, 500, 375);
    same_epoch += box == draw_random_resized_crop(kSeed, 6, index, 500, 375);
    same_seed += box == draw_random_resized_crop(kSeed + 1, 5, index, 500, 375);
  }
  EXPECT_LE(same_epoch, 5);
  EXPECT_LE(same_seed, 5);
}

TEST(ResizedCrop, FallsBackToTheCentreCropWhenNoTryFits) {
  // No crop of area >= 8% with a ratio in [3/4, 4/3] fits 10 rows (or columns) of 1000 pixels:
  // the centre crop clamped to ratio 4/3 (3/4), round(10 * 4/3) = 13 wide (high).
  for (std::uint64_t i = 0; i < 100; ++i) {
    EXPECT_EQ(draw_random_resized_crop(kSeed, 0, i, 1000, 10), (PixelBox{0, 493, 10, 13}));
    EXPECT_EQ(draw_random_resized_crop(kSeed, 0, i, 10, 1000), (PixelBox{493, 0, 13, 10}));
  }
  // Python's round: 2 / 0.8 = 2.5 rounds to 2, not 3.
  EXPECT_EQ(draw_random_resized_crop(kSeed, 0, 0, 2, 100, {}, {0.8, 1.25}),
            (PixelBox{49, 0, 2, 2}));
  // Areas above the image's: the whole image, its ratio being inside the range.
  EXPECT_EQ(draw_random_resized_crop(kSeed, 0, 0, 300, 250, {1.5, 2.0}),
            (PixelBox{0, 0, 250, 300}));
}

TEST(ResizedCrop, FlipsHalfTheTimeIndependentlyOfTheBox) {
  constexpr int kSamples = 20000;
  int flips = 0;
  int flips_with_even_left = 0;
  int even_left = 0;
  for (int i = 0; i < kSamples; ++i) {
    const auto index = static_cast<std::uint64_t>(i);
    const bool flip = draw_flip(kSeed, 2, index);
    const bool even = draw_random_resized_crop(kSeed, 2, index, 500, 375).left % 2 == 0;
    flips += flip;
    even_left += even;
    flips_with_even_left += flip && even;
  }
  EXPECT_NEAR(flips, kSamples / 2, kSamples / 50);  // 7 standard deviations
  EXPECT_NEAR(flips_with_even_left, even_left / 2, kSamples / 50);
}

TEST(ResizedCrop, RejectsBadArguments) {
  EXPECT_THROW(draw_random_resized_crop(1, 0, 0, 0, 10), runtime::InvalidArgument);
  EXPECT_THROW(draw_random_resized_crop(1, 0, 0, 10, -1), runtime::InvalidArgument);
  EXPECT_THROW(draw_random_resized_crop(1, 0, 0, 10, 10, {0.5, 0.4}), runtime::InvalidArgument);
  EXPECT_THROW(draw_random_resized_crop(1, 0, 0, 10, 10, {0.0, 1.0}), runtime::InvalidArgument);
  EXPECT_THROW(draw_random_resized_crop(1, 0, 0, 10, 10, {}, {0.0, 1.0}), runtime::InvalidArgument);
  EXPECT_THROW(eval_resize_crop(10, 10, 0), runtime::InvalidArgument);
  EXPECT_THROW(eval_resize_crop(0, 10, 224), runtime::InvalidArgument);
}

TEST(ResizedCrop, EvalGeometryIsTorchvisionsResizeAndCenterCrop) {
  // 375 -> 256, 500 -> int(256 * 500 / 375) = 341; left round(58.5) = 58 (half to even).
  EXPECT_EQ(eval_resize_crop(500, 375, 224), (EvalGeometry{341, 256, {16, 58, 224, 224}}));
  EXPECT_EQ(eval_resize_crop(375, 500, 224), (EvalGeometry{256, 341, {58, 16, 224, 224}}));
  EXPECT_EQ(eval_resize_crop(224, 224, 224), (EvalGeometry{256, 256, {16, 16, 224, 224}}));
  EXPECT_EQ(eval_resize_crop(1000, 250, 224), (EvalGeometry{1024, 256, {16, 400, 224, 224}}));
  // int(64 * 256 / 224) = 73; 123 -> int(73 * 123 / 97) = 92; top round(4.5) = 4.
  EXPECT_EQ(eval_resize_crop(123, 97, 64), (EvalGeometry{92, 73, {4, 14, 64, 64}}));
  // 301 -> int(73 * 301 / 97) = 226; left round(4.5) = 4, top 81.
  EXPECT_EQ(eval_resize_crop(97, 301, 64), (EvalGeometry{73, 226, {81, 4, 64, 64}}));
  // int(225 * 256 / 224) = 257; 400 -> int(257 * 400 / 300) = 342; left round(58.5) = 58.
  EXPECT_EQ(eval_resize_crop(400, 300, 225), (EvalGeometry{342, 257, {16, 58, 225, 225}}));
  // An image already at the resized size keeps it; round(5.5) = 6.
  EXPECT_EQ(eval_resize_crop(84, 73, 64), (EvalGeometry{84, 73, {4, 10, 64, 64}}));
  EXPECT_EQ(eval_resize_crop(85, 73, 64), (EvalGeometry{85, 73, {4, 10, 64, 64}}));
  EXPECT_EQ(eval_resize_crop(87, 73, 64), (EvalGeometry{87, 73, {4, 12, 64, 64}}));
}

}  // namespace
}  // namespace vdnn::models
