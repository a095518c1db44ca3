// The ImageNet recipe's per-sample crop box and flip (torchvision's RandomResizedCrop and
// RandomHorizontalFlip) and its eval geometry (Resize + CenterCrop), with Python's rounding.
#include "models/data/image/ResizedCrop.hpp"

#include <cmath>

#include "runtime/Error.hpp"
#include "runtime/Random.hpp"

namespace vdnn::models {
namespace {

// Keep these draws apart from each other and from the other users of the seed (shuffles, the
// CIFAR crop, noise, init).
constexpr std::uint64_t kResizedCropStream = 0x52C5'C40Bull;
constexpr std::uint64_t kFlipStream = 0xF11B'7A1Full;
// torchvision's number of tries before the centre-crop fallback.
constexpr int kCropAttempts = 10;

// The draws of one sample: a counter-based sequence keyed by (stream, seed, epoch, index).
class SampleDraws {
 public:
  SampleDraws(std::uint64_t stream, std::uint64_t seed, std::uint64_t epoch, std::uint64_t index)
      : key_(runtime::mix64(runtime::mix64(runtime::mix64(seed ^ stream) ^ epoch) ^ index)) {}

  std::uint64_t bits() noexcept { return runtime::mix64(key_ ^ next_++); }
  // Uniform in [0, 1) with 53 bits.
  double uniform() noexcept { return static_cast<double>(bits() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) noexcept { return lo + (hi - lo) * uniform(); }
  // Uniform over 0 .. n inclusive (torch.randint(0, n + 1)); n is far below 2^53.
  std::int64_t up_to(std::int64_t n) noexcept {
    return static_cast<std::int64_t>(uniform() * static_cast<double>(n + 1));
  }

 private:
  std::uint64_t key_;
  std::uint64_t next_ = 0;
};

// Python 3's round(): to the nearest integer, halves to the even one.
std::int64_t round_half_even(double x) noexcept {
  const double floor = std::floor(x);
  const double diff = x - floor;
  auto n = static_cast<std::int64_t>(floor);
  if (diff > 0.5 || (diff == 0.5 && n % 2 != 0)) ++n;
  return n;
}

// torchvision's fallback: the whole image, or its centre clamped to the ratio range.
PixelBox centre_crop_within_ratio(std::int64_t width, std::int64_t height,
                                  const CropRatio& ratio) noexcept {
  std::int64_t w = width;
  std::int64_t h = height;
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
  if (in_ratio < ratio.min) {
    h = round_half_even(static_cast<double>(w) / ratio.min);
  } else if (in_ratio > ratio.max) {
    w = round_half_even(static_cast<double>(h) * ratio.max);
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

}  // namespace

PixelBox draw_random_resized_crop(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index,
                                  std::int64_t width, std::int64_t height, const CropScale& scale,
                                  const CropRatio& ratio) {
  VDNN_EXPECTS(width > 0 && height > 0, "the image must have a positive size");
  VDNN_EXPECTS(scale.min > 0.0 && scale.min <= scale.max, "the crop scale range must be positive");
  VDNN_EXPECTS(ratio.min > 0.0 && ratio.min <= ratio.max, "the crop ratio range must be positive");
  SampleDraws draws(kResizedCropStream, seed, epoch, index);
  const double area = static_cast<double>(width) * static_cast<double>(height);
  const double log_min = std::log(ratio.min);
  const double log_max = std::log(ratio.max);
  for (int attempt = 0; attempt < kCropAttempts; ++attempt) {
    const double target_area = area * draws.uniform(scale.min, scale.max);
    const double aspect = std::exp(draws.uniform(log_min, log_max));
    const std::int64_t w = round_half_even(std::sqrt(target_area * aspect));
    const std::int64_t h = round_half_even(std::sqrt(target_area / aspect));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const std::int64_t top = draws.up_to(height - h);
      return {top, draws.up_to(width - w), h, w};
    }
  }
  return centre_crop_within_ratio(width, height, ratio);
}

bool draw_flip(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index) noexcept {
  return (SampleDraws(kFlipStream, seed, epoch, index).bits() >> 63) != 0;
}

EvalGeometry eval_resize_crop(std::int64_t width, std::int64_t height, std::int64_t size) {
  VDNN_EXPECTS(width > 0 && height > 0 && size > 0, "image and crop sizes must be positive");
  // Python's int(size * 256 / 224): true division, then truncation.
  const auto short_target = static_cast<std::int64_t>(static_cast<double>(size * 256) / 224.0);
  const bool wide = width > height;
  const std::int64_t short_side = wide ? height : width;
  const std::int64_t long_side = wide ? width : height;
  const auto long_target = static_cast<std::int64_t>(static_cast<double>(short_target * long_side) /
                                                     static_cast<double>(short_side));
  EvalGeometry geometry;
  geometry.resized_width = wide ? long_target : short_target;
  geometry.resized_height = wide ? short_target : long_target;
  geometry.crop = {round_half_even(static_cast<double>(geometry.resized_height - size) / 2.0),
                   round_half_even(static_cast<double>(geometry.resized_width - size) / 2.0), size,
                   size};
  return geometry;
}

}  // namespace vdnn::models
