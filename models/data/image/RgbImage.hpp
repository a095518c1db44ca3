// RgbImage: an 8-bit, three-channel image in host memory, the form every decoder produces and the
// crop/resize stage reads (issue 25's image pipeline).
#pragma once

#include <cstdint>
#include <vector>

namespace vdnn::models {

/// Rows top to bottom, each `width` interleaved R, G, B bytes (HWC); pixels.size() is
/// width * height * 3. A value type; an empty image has width and height 0.
struct RgbImage {
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::vector<std::uint8_t> pixels;

  const std::uint8_t* row(std::int64_t y) const noexcept { return pixels.data() + y * width * 3; }
  std::uint8_t* row(std::int64_t y) noexcept { return pixels.data() + y * width * 3; }
};

/// A rectangle of an image in its pixels: rows top .. top + height - 1, columns left ..
/// left + width - 1.
struct PixelBox {
  std::int64_t top = 0;
  std::int64_t left = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;

  friend bool operator==(const PixelBox& a, const PixelBox& b) {
    return a.top == b.top && a.left == b.left && a.height == b.height && a.width == b.width;
  }
};

}  // namespace vdnn::models
