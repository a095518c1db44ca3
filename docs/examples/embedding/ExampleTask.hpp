// What both embedding examples share: the network and the task's images (each class a pattern of
// its own: horizontal stripes of a class-dependent period in a class-dependent channel).
#pragma once

#include <cstdint>
#include <string>
#include <vdnn/vdnn.hpp>

namespace example {

constexpr std::int64_t kChannels = 3;
constexpr std::int64_t kSize = 32;  // height and width
constexpr std::int64_t kClasses = 10;
constexpr std::int64_t kImageFloats = kChannels * kSize * kSize;

/// A small CNN: two conv-bn-relu stages, global pooling and a linear classifier.
inline vdnn::Network network() {
  vdnn::NetworkBuilder net("embedding-example", kChannels, kSize, kSize, kClasses);
  vdnn::Tensor x = net.conv2d("conv1", net.input(), 16, 3, 1, 1);
  x = net.relu("relu1", net.batchnorm2d("bn1", x));
  x = net.conv2d("conv2", x, 32, 3, 2, 1);
  x = net.relu("relu2", net.batchnorm2d("bn2", x));
  x = net.flatten("flatten", net.global_avgpool("avgpool", x));
  return net.softmax_cross_entropy("loss", net.linear("fc", x, kClasses));
}

/// Pixel (c, h, w) of class `label`'s pattern, noise-free: in channel label % 3, stripes of
/// label / 3 + 1 rows; elsewhere flat.
inline float pattern(std::int32_t label, std::int64_t c, std::int64_t h, std::int64_t /*w*/) {
  if (c != label % kChannels) return 0.0F;
  return (h / (label / kChannels + 1)) % 2 == 0 ? 1.5F : -1.5F;
}

}  // namespace example
