// Fuzz target of the image decoders: bytes -> models::read_image_info -> decode_region of the
// whole image, its centre at a reduced DCT scale, and its last pixel. Every rejection must be one
// of vdnn's typed errors; anything else (a crash, a sanitizer report, a foreign exception, an
// allocation over the fuzzer's limit, an input slower than its time limit) is a bug.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "models/data/image/ImageDecoder.hpp"
#include "runtime/Error.hpp"

namespace {

// Small enough that the largest image, its progressive coefficients and its pixels stay well
// inside the fuzzer's memory and time limits under the sanitizers.
vdnn::models::DecodeLimits fuzz_limits() {
  vdnn::models::DecodeLimits limits;
  limits.max_pixels = std::int64_t{1} << 20;
  limits.max_file_bytes = std::int64_t{1} << 20;
  limits.max_scans = 64;
  return limits;
}

void decode_boxes(const std::uint8_t* data, std::size_t size,
                  const vdnn::models::DecodeLimits& limits) {
  using vdnn::models::PixelBox;
  const vdnn::models::ImageInfo info = vdnn::models::read_image_info(data, size, "fuzz", limits);
  const std::int64_t h = info.height, w = info.width;
  const PixelBox boxes[] = {
      {0, 0, h, w},
      {h / 4, w / 4, std::max<std::int64_t>(1, h / 2), std::max<std::int64_t>(1, w / 2)},
      {h - 1, w - 1, 1, 1}};
  for (const PixelBox& box : boxes) {
    try {
      static_cast<void>(vdnn::models::decode_region(data, size, "fuzz", box, box.width / 3,
                                                    box.height / 3, limits));
    } catch (const vdnn::runtime::DataError&) {
      // Corrupt pixel data: the expected outcome for most inputs that pass the header.
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    decode_boxes(data, size, fuzz_limits());
  } catch (const vdnn::runtime::DataError&) {
    // A refused header: not an image, corrupt, or over the limits.
  }
  return 0;
}
