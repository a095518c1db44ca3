// Augmentation: the random crop of a zero-padded image and the horizontal flip that training
// images get, drawn per sample from a counter-based hash (Note [Data loading]).
#pragma once

#include <cstdint>
#include <string>

namespace vdnn::models {

enum class Augment : std::uint8_t {
  None,      // images as stored
  CropFlip,  // a random crop of the image zero-padded by kCropPad, then a flip with p = 1/2
  ImageNet,  // image files: torchvision's RandomResizedCrop to the input size, then a flip
};

/// "none", "crop-flip" or "imagenet".
const char* augment_name(Augment augment) noexcept;
/// Parses an augment_name(); throws runtime::InvalidArgument naming the known ones.
Augment parse_augment(const std::string& name);

/// Padding on every side of the image before the crop: the crop's corner moves by up to
/// 2 * kCropPad pixels each way.
inline constexpr std::int64_t kCropPad = 4;

/// Where one sample's output pixels come from: output (y, x) is input
/// (y + dy - kCropPad, x' + dx - kCropPad) with x' = W - 1 - x when flipped, else x; outside the
/// input it is padding. The default is the identity.
struct CropFlip {
  std::int64_t dy = kCropPad;  // 0 .. 2 * kCropPad
  std::int64_t dx = kCropPad;
  bool flip = false;
};

/// The crop and flip of sample `index` of epoch `epoch`: a pure function of its arguments, so
/// the same run draws the same augmentation on any thread, at any time, after any resume.
CropFlip draw_crop_flip(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index) noexcept;

/// Writes one channels x height x width image to `dst` through `crop`: `pixel(c, y, x)` gives an
/// input pixel (called only inside the image) and `padding(c)` the value outside it.
template <typename Pixel, typename Padding>
void write_cropped(std::int64_t channels, std::int64_t height, std::int64_t width,
                   const CropFlip& crop, Pixel pixel, Padding padding, float* dst) {
  for (std::int64_t c = 0; c < channels; ++c) {
    const float pad = padding(c);
    for (std::int64_t y = 0; y < height; ++y, dst += width) {
      const std::int64_t sy = y + crop.dy - kCropPad;
      for (std::int64_t x = 0; x < width; ++x) {
        const std::int64_t sx = (crop.flip ? width - 1 - x : x) + crop.dx - kCropPad;
        dst[x] = sy >= 0 && sy < height && sx >= 0 && sx < width ? pixel(c, sy, sx) : pad;
      }
    }
  }
}

}  // namespace vdnn::models
