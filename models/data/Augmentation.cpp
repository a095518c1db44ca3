// The augmentation names and the per-sample draw of a crop and a flip.
#include "models/data/Augmentation.hpp"

#include "runtime/Error.hpp"
#include "runtime/Random.hpp"

namespace vdnn::models {
namespace {

// In the order of enum Augment.
constexpr const char* kAugmentNames[] = {"none", "crop-flip", "imagenet"};
// Keeps augmentation draws apart from the other users of the seed (shuffles, noise, init).
constexpr std::uint64_t kAugmentStream = 0xA0C5'F11Bull;

}  // namespace

const char* augment_name(Augment augment) noexcept {
  return kAugmentNames[static_cast<std::size_t>(augment)];
}

Augment parse_augment(const std::string& name) {
  for (std::size_t i = 0; i < std::size(kAugmentNames); ++i) {
    if (name == kAugmentNames[i]) return static_cast<Augment>(i);
  }
  throw runtime::InvalidArgument("unknown augmentation '" + name +
                                 "'; expected 'none', 'crop-flip' or 'imagenet'");
}

CropFlip draw_crop_flip(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index) noexcept {
  const std::uint64_t bits =
      runtime::mix64(runtime::mix64(runtime::mix64(seed ^ kAugmentStream) ^ epoch) ^ index);
  constexpr std::uint64_t kPositions = 2 * kCropPad + 1;
  return {static_cast<std::int64_t>(bits % kPositions),
          static_cast<std::int64_t>((bits >> 16) % kPositions), ((bits >> 32) & 1u) != 0};
}

}  // namespace vdnn::models
