// ResizedCrop: the geometry of the ImageNet recipe (issue 25): torchvision's RandomResizedCrop box
// and the flip, drawn per sample from a counter-based hash, and the eval resize + centre crop.
#pragma once

#include <cstdint>

#include "models/data/image/RgbImage.hpp"

namespace vdnn::models {

/// The range of the crop's area as a fraction of the image's (torchvision's `scale`).
struct CropScale {
  double min = 0.08;
  double max = 1.0;
};

/// The range of the crop's aspect ratio width / height (torchvision's `ratio`), drawn uniformly
/// in log space.
struct CropRatio {
  double min = 3.0 / 4.0;
  double max = 4.0 / 3.0;
};

/// The crop box of sample `index` of epoch `epoch` in a width x height image: torchvision's
/// RandomResizedCrop.get_params (up to 10 tries of an area uniform in `scale` x the image's area
/// and an aspect ratio log-uniform in `ratio`, sides rounded half to even, the first that fits
/// placed uniformly; else the centre crop clamped to the ratio range). A pure function of its
/// arguments, so any thread, at any time, after any resume draws the same box. The box lies
/// inside the image. Throws runtime::InvalidArgument for a non-positive size or an empty or
/// non-positive scale or ratio range.
PixelBox draw_random_resized_crop(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index,
                                  std::int64_t width, std::int64_t height,
                                  const CropScale& scale = {}, const CropRatio& ratio = {});

/// Whether sample `index` of epoch `epoch` is mirrored left to right: p = 1/2, a pure function
/// of its arguments, drawn apart from the crop box.
bool draw_flip(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index) noexcept;

/// The eval transform's geometry: the size the whole image is resized to and the crop kept of
/// that resized image.
struct EvalGeometry {
  std::int64_t resized_width = 0;
  std::int64_t resized_height = 0;
  PixelBox crop;  // in the resized image, size x size

  friend bool operator==(const EvalGeometry& a, const EvalGeometry& b) {
    return a.resized_width == b.resized_width && a.resized_height == b.resized_height &&
           a.crop == b.crop;
  }
};

/// torchvision's Resize(int(size * 256 / 224)) (the shorter side to that, the longer one scaled
/// and truncated) then CenterCrop(size) (the corner rounded half to even), for a width x height
/// image. Throws runtime::InvalidArgument when a size is not positive.
EvalGeometry eval_resize_crop(std::int64_t width, std::int64_t height, std::int64_t size);

}  // namespace vdnn::models
