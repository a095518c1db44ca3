// Inference on vdnn's public API: a Predictor loads the checkpoint vdnn_custom_loop wrote and
// classifies images: raw float32 files (N x 3 x 32 x 32, NCHW) or, without one, each class's
// pattern.
//   vdnn_inference --checkpoint FILE [--images FILE.f32]
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ExampleTask.hpp"

namespace {

std::vector<float> read_images(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw vdnn::InvalidArgument("cannot read " + path);
  const auto bytes = static_cast<std::size_t>(in.tellg());
  if (bytes == 0 || bytes % (example::kImageFloats * sizeof(float)) != 0) {
    throw vdnn::InvalidArgument(path + " is not a whole number of 3x32x32 float32 images");
  }
  std::vector<float> images(bytes / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(images.data()), static_cast<std::streamsize>(bytes));
  return images;
}

// One image per class: its noise-free pattern, NCHW.
std::vector<float> class_patterns() {
  std::vector<float> images;
  for (std::int32_t label = 0; label < example::kClasses; ++label) {
    for (std::int64_t c = 0; c < example::kChannels; ++c) {
      for (std::int64_t h = 0; h < example::kSize; ++h) {
        for (std::int64_t w = 0; w < example::kSize; ++w) {
          images.push_back(example::pattern(label, c, h, w));
        }
      }
    }
  }
  return images;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string checkpoint;
    std::string image_file;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--checkpoint") {
        checkpoint = argv[i + 1];
      } else if (flag == "--images") {
        image_file = argv[i + 1];
      } else {
        throw vdnn::InvalidArgument("unknown flag " + flag);
      }
    }
    if (checkpoint.empty()) throw vdnn::InvalidArgument("--checkpoint FILE is required");
    const std::vector<float> images =
        image_file.empty() ? class_patterns() : read_images(image_file);
    const auto count = static_cast<std::int64_t>(images.size()) / example::kImageFloats;
    vdnn::PredictorConfig config;
    config.batch = 8;  // any batch: the last one is padded
    vdnn::Predictor predictor(example::network(), checkpoint, config);
    const std::vector<float> p = predictor.probabilities(images.data(), count);
    std::int64_t right = 0;  // of the class patterns, image n shows class n
    for (std::int64_t n = 0; n < count; ++n) {
      const float* row = p.data() + n * example::kClasses;
      std::int64_t best = 0;
      for (std::int64_t k = 1; k < example::kClasses; ++k) best = row[k] > row[best] ? k : best;
      right += best == n ? 1 : 0;
      std::printf("image %lld: class %lld (p = %.3f)\n", static_cast<long long>(n),
                  static_cast<long long>(best), row[best]);
    }
    std::printf("device peak: %llu bytes (the parameters and one forward pass)\n",
                static_cast<unsigned long long>(predictor.memory().device_peak));
    if (image_file.empty()) {
      std::printf("%lld of %lld class patterns recognized\n", static_cast<long long>(right),
                  static_cast<long long>(count));
    }
    return 0;
  } catch (const vdnn::Error& e) {
    std::fprintf(stderr, "vdnn_inference: %s\n", e.what());
    return 1;
  }
}
