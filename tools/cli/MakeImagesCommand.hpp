// `vdnn make-images`: writes a generated ImageFolder of learnable JPEG/PNG images (issue 25's
// test data: ImageNet-like sizes and the grayscale, CMYK, progressive and PNG files real sets
// hold).
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace vdnn::tools {

struct MakeImagesOptions {
  std::string out;
  std::int32_t classes = 0;
  std::int64_t train = 0;  // images per class
  std::int64_t val = 0;    // images per class
  std::uint64_t seed = 0;
  std::int64_t min_side = 200;
  std::int64_t max_side = 500;
  std::int64_t threads = 0;  // 0: one per hardware thread
  bool force = false;
};

CLI::App* add_make_images_command(CLI::App& app, MakeImagesOptions& options);

/// Writes OUT/train/<class>/<key>.jpg|.png (and OUT/val/... when val > 0), class folders n0000,
/// n0001, ..., keys <class>_<index>; the files are a pure function of the options but --threads.
/// Prints a summary line. Throws runtime::InvalidArgument when --out exists and is not an empty
/// directory (without --force; with it, OUT/train and OUT/val are replaced), when --min-side is
/// over --max-side or no image is asked for; runtime::Error when a file cannot be written.
int run_make_images(const MakeImagesOptions& options);

}  // namespace vdnn::tools
