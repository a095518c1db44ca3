// Draws make-images' class patterns (stripes and motifs in luminance, random colours and noise)
// and stores them as JPEG or PNG.
#include "tools/cli/PatternImages.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "models/data/image/JpegEncoder.hpp"
#include "models/data/image/PngEncoder.hpp"
#include "runtime/Error.hpp"
#include "runtime/Random.hpp"

namespace vdnn::tools {
namespace {

using models::RgbImage;

constexpr double kPi = 3.14159265358979323846;
constexpr int kOrientations = 5;  // 0, 22.5, 45, 67.5, 90 degrees
constexpr double kPeriodFractions[] = {1.0 / 45, 1.0 / 15, 1.0 / 5};  // of the shorter side
constexpr int kShapes = 7;
constexpr std::int64_t kLutSize = 1024;            // stripe profile entries per period
constexpr int kKindsPerHundred[] = {1, 3, 1, 10};  // PNG, gray, CMYK, progressive

enum class Shape : std::uint8_t { Disc, Square, Triangle, Plus, Ring, Diamond, Cross };

// A stream of random numbers from one seed (SplitMix64).
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() noexcept { return runtime::mix64(state_++); }
  double uniform(double lo, double hi) noexcept {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
  }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) noexcept {  // inclusive
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }

 private:
  std::uint64_t state_;
};

struct ClassCues {
  double angle_degrees;
  double period_fraction;
  Shape shape;
  bool bright_motifs;
  bool square_wave;
};

ClassCues cues_of(std::int32_t label) {
  return {22.5 * (label % kOrientations), kPeriodFractions[label % 3],
          static_cast<Shape>(label % kShapes), label % 2 == 1, (label / 210) % 2 == 1};
}

bool inside(Shape shape, double dx, double dy, double r) {
  const double ax = std::abs(dx), ay = std::abs(dy);
  switch (shape) {
    case Shape::Disc:
      return dx * dx + dy * dy <= r * r;
    case Shape::Square:
      return ax <= 0.8 * r && ay <= 0.8 * r;
    case Shape::Triangle:
      return dy <= 0.75 * r && ax <= 0.6 * (dy + r);  // apex up
    case Shape::Plus:
      return (ax <= 0.3 * r && ay <= r) || (ay <= 0.3 * r && ax <= r);
    case Shape::Ring: {
      const double d2 = dx * dx + dy * dy;
      return d2 <= r * r && d2 >= 0.36 * r * r;
    }
    case Shape::Diamond:
      return ax + ay <= r;
    case Shape::Cross:
      return ax <= 0.8 * r && ay <= 0.8 * r && std::abs(ax - ay) <= 0.3 * r;
  }
  return false;
}

using Colour = std::array<double, 3>;

// A random colour whose ITU-R 601 luma is about `luma`: a random tint of up to `tint` per channel,
// shifted (adding d to every channel adds d to the luma) and clamped.
Colour colour_with_luma(Draws& draws, double luma, double tint) {
  Colour c = {draws.uniform(-tint, tint), draws.uniform(-tint, tint), draws.uniform(-tint, tint)};
  const double shift = luma - (0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]);
  for (double& v : c) v = std::clamp(v + shift, 0.0, 255.0);
  return c;
}

RgbImage blank_image(Draws& draws, std::int64_t min_side, std::int64_t max_side) {
  const std::int64_t shorter = draws.integer(min_side, max_side);
  const double ratio = std::exp(draws.uniform(0.0, std::log(16.0 / 9.0)));
  const auto longer = static_cast<std::int64_t>(std::lround(static_cast<double>(shorter) * ratio));
  const bool landscape = draws.uniform(0.0, 1.0) < 0.7;
  RgbImage image;
  image.width = landscape ? longer : shorter;
  image.height = landscape ? shorter : longer;
  image.pixels.resize(static_cast<std::size_t>(image.width * image.height * 3));
  return image;
}

void draw_stripes(RgbImage& image, const ClassCues& cues, double shorter, Draws& draws) {
  const double sign = draws.uniform(0.0, 1.0) < 0.5 ? -1.0 : 1.0;
  const double angle = sign * (cues.angle_degrees + draws.uniform(-2.0, 2.0)) * kPi / 180.0;
  const double period = shorter * cues.period_fraction * draws.uniform(0.9, 1.1);
  const double dark = draws.uniform(55.0, 85.0);
  const Colour a = colour_with_luma(draws, dark, 60.0);
  const Colour b = colour_with_luma(draws, dark + draws.uniform(70.0, 100.0), 60.0);
  std::vector<std::array<std::uint8_t, 3>> profile(kLutSize);
  for (std::int64_t i = 0; i < kLutSize; ++i) {
    const double s = std::sin(2.0 * kPi * static_cast<double>(i) / kLutSize);
    const double v = cues.square_wave ? (s >= 0.0 ? 1.0 : 0.0) : 0.5 + 0.5 * s;
    for (int c = 0; c < 3; ++c) {
      profile[i][c] = static_cast<std::uint8_t>(std::lround(b[c] + (a[c] - b[c]) * v));
    }
  }
  // Stripe coordinate in profile entries, kept positive so that truncation is floor.
  const double per_pixel = kLutSize / period;
  const double du = std::cos(angle) * per_pixel, dv = std::sin(angle) * per_pixel;
  const double offset =
      draws.uniform(0.0, kLutSize) + std::abs(du) * static_cast<double>(image.width) +
      std::abs(dv) * static_cast<double>(image.height) + static_cast<double>(kLutSize);
  for (std::int64_t y = 0; y < image.height; ++y) {
    std::uint8_t* row = image.row(y);
    double u = offset + dv * static_cast<double>(y);
    for (std::int64_t x = 0; x < image.width; ++x, u += du) {
      const auto& p = profile[static_cast<std::uint64_t>(u) & (kLutSize - 1)];
      std::copy(p.begin(), p.end(), row + 3 * x);
    }
  }
}

void draw_motif(RgbImage& image, Shape shape, double cx, double cy, double r,
                const Colour& colour) {
  const auto y0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(cy - r));
  const auto y1 = std::min<std::int64_t>(image.height - 1, static_cast<std::int64_t>(cy + r) + 1);
  const auto x0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(cx - r));
  const auto x1 = std::min<std::int64_t>(image.width - 1, static_cast<std::int64_t>(cx + r) + 1);
  const std::array<std::uint8_t, 3> rgb = {static_cast<std::uint8_t>(colour[0]),
                                           static_cast<std::uint8_t>(colour[1]),
                                           static_cast<std::uint8_t>(colour[2])};
  for (std::int64_t y = y0; y <= y1; ++y) {
    for (std::int64_t x = x0; x <= x1; ++x) {
      if (inside(shape, static_cast<double>(x) - cx, static_cast<double>(y) - cy, r)) {
        std::copy(rgb.begin(), rgb.end(), image.row(y) + 3 * x);
      }
    }
  }
}

void draw_motifs(RgbImage& image, const ClassCues& cues, double shorter, Draws& draws) {
  const double area = static_cast<double>(image.width * image.height);
  const auto count = static_cast<int>(std::lround(16.0 * area / (shorter * shorter)));
  for (int i = 0; i < count; ++i) {
    const double luma = cues.bright_motifs ? draws.uniform(230.0, 250.0) : draws.uniform(5.0, 25.0);
    draw_motif(image, cues.shape, draws.uniform(0.0, static_cast<double>(image.width)),
               draws.uniform(0.0, static_cast<double>(image.height)),
               shorter * draws.uniform(0.045, 0.065), colour_with_luma(draws, luma, 12.0));
  }
}

// Independent noise on every channel of every pixel: what makes the JPEGs as large as photos.
void add_noise(RgbImage& image, Draws& draws) {
  const double amplitude = draws.uniform(20.0, 32.0);
  std::array<int, 256> offsets{};
  for (int i = 0; i < 256; ++i) {
    offsets[i] = static_cast<int>(std::lround((i / 127.5 - 1.0) * amplitude));
  }
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < image.pixels.size(); ++i, bits >>= 8) {
    if (i % 8 == 0) bits = draws.next();
    image.pixels[i] =
        static_cast<std::uint8_t>(std::clamp(image.pixels[i] + offsets[bits & 0xFF], 0, 255));
  }
}

}  // namespace

StoredKind stored_kind(std::uint64_t seed, std::int64_t index) {
  std::array<int, 100> order{};
  std::iota(order.begin(), order.end(), 0);
  Draws draws(runtime::mix64(seed ^ runtime::mix64(static_cast<std::uint64_t>(index / 100))));
  for (int i = 99; i > 0; --i) std::swap(order[i], order[draws.integer(0, i)]);
  int slot = order[index % 100];
  const StoredKind kinds[] = {StoredKind::Png, StoredKind::GrayJpeg, StoredKind::CmykJpeg,
                              StoredKind::ProgressiveJpeg};
  for (int k = 0; k < 4; ++k) {
    if (slot < kKindsPerHundred[k]) return kinds[k];
    slot -= kKindsPerHundred[k];
  }
  return StoredKind::Jpeg;
}

const char* file_extension(StoredKind kind) noexcept {
  return kind == StoredKind::Png ? ".png" : ".jpg";
}

RgbImage render_pattern(std::int32_t label, std::uint64_t image_seed, std::int64_t min_side,
                        std::int64_t max_side) {
  VDNN_EXPECTS(label >= 0 && label < kMaxPatternClasses,
               "render_pattern: label " + std::to_string(label) + " outside 0 .. " +
                   std::to_string(kMaxPatternClasses - 1));
  VDNN_EXPECTS(min_side >= 1 && min_side <= max_side, "render_pattern: bad side range");
  Draws draws(image_seed);
  RgbImage image = blank_image(draws, min_side, max_side);
  const ClassCues cues = cues_of(label);
  const auto shorter = static_cast<double>(std::min(image.width, image.height));
  draw_stripes(image, cues, shorter, draws);
  draw_motifs(image, cues, shorter, draws);
  add_noise(image, draws);
  return image;
}

std::vector<std::uint8_t> encode_pattern(const RgbImage& image, StoredKind kind,
                                         std::uint64_t image_seed) {
  if (kind == StoredKind::Png) return models::encode_png(image);
  Draws draws(runtime::mix64(image_seed ^ 0x51A7E));
  models::JpegEncoding encoding;
  encoding.quality = static_cast<int>(draws.integer(89, 96));
  encoding.progressive = kind == StoredKind::ProgressiveJpeg;
  if (kind == StoredKind::GrayJpeg) encoding.colour = models::ImageColour::Gray;
  if (kind == StoredKind::CmykJpeg) {
    encoding.colour = draws.next() % 2 == 0 ? models::ImageColour::Cmyk : models::ImageColour::Ycck;
  }
  return models::encode_jpeg(image, encoding);
}

}  // namespace vdnn::tools
