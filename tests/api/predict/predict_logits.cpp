// predict_logits CONFIG CHECKPOINT IMAGES COUNT OUT: the logits vdnn::Predictor gives for COUNT
// images (raw float32, NCHW, the network's input size) on CHECKPOINT's weights, written to OUT as
// raw float32 (COUNT x classes). Deterministic kernels and FP32 math (no TF32), so that
// tests/api/torch_predict_test.py can hold it to PyTorch's float32 error. Exit 0, or 1 with the
// error on stderr.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vdnn/vdnn.hpp>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: predict_logits CONFIG CHECKPOINT IMAGES COUNT OUT\n");
    return 2;
  }
  try {
    const vdnn::Network network = vdnn::Network::from_file(argv[1]);
    const std::int64_t count = std::atoll(argv[4]);
    std::ifstream in(argv[3], std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<float> images(bytes.size() / sizeof(float));
    std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(images.size() * 4),
              reinterpret_cast<char*>(images.data()));
    if (count < 1 || images.empty() || images.size() % static_cast<std::size_t>(count) != 0) {
      std::fprintf(stderr, "predict_logits: %s does not hold %lld images\n", argv[3],
                   static_cast<long long>(count));
      return 1;
    }
    vdnn::PredictorConfig config;
    config.batch = count;
    config.deterministic = true;
    config.tf32 = false;
    config.cache = false;
    vdnn::Predictor predictor(network, argv[2], config);
    const std::vector<float> logits = predictor.predict(images.data(), count);
    std::ofstream out(argv[5], std::ios::binary);
    out.write(reinterpret_cast<const char*>(logits.data()),
              static_cast<std::streamsize>(logits.size() * sizeof(float)));
    return out ? 0 : 1;
  } catch (const vdnn::Error& e) {
    std::fprintf(stderr, "predict_logits: %s\n", e.what());
    return 1;
  }
}
