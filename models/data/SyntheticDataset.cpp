// Class prototypes from random waves, samples from prototypes plus counter-based noise.
#include "models/data/SyntheticDataset.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/Error.hpp"
#include "runtime/Random.hpp"

namespace vdnn::models {
namespace {

constexpr int kWaves = 3;
constexpr double kNoise = 1.0;
constexpr std::uint64_t kPrototypeStream = 1;
constexpr std::uint64_t kLabelStream = 2;
constexpr std::uint64_t kNoiseStream = 3;
// Noise comes from a fixed bank read at a random offset per sample: drawing fresh normals for
// every pixel of a 224x224 batch would cost more than a GPU training step.
constexpr std::size_t kNoiseBank = std::size_t{1} << 20;
// Test samples are numbered from here: a training run never draws 2^62 samples.
constexpr std::uint64_t kFirstTestSample = std::uint64_t{1} << 62;

// out[j] = proto[j] + noise[(offset + j) % kNoiseBank] for j < n, in runs split where the bank
// wraps so that the loop vectorizes: a 224x224 batch of 128 through the per-pixel crop path took
// ~30 ms of the loader thread, longer than a bf16 ResNet-50 step.
void add_noise(const float* proto, const float* noise, std::size_t offset, std::size_t n,
               float* out) {
  for (std::size_t j = 0; j < n;) {
    const std::size_t start = (offset + j) % kNoiseBank;
    const std::size_t run = std::min(n - j, kNoiseBank - start);
    for (std::size_t k = 0; k < run; ++k) out[j + k] = proto[j + k] + noise[start + k];
    j += run;
  }
}

}  // namespace

SyntheticDataset::SyntheticDataset(const SampleFormat& format, Split split, std::uint64_t seed,
                                   Augment augment)
    : format_(format),
      split_(split),
      seed_(seed),
      augment_(augment),
      prototypes_(static_cast<std::size_t>(format.num_classes * format.sample_numel())),
      noise_(kNoiseBank) {
  for (std::size_t i = 0; i < kNoiseBank; ++i) {
    noise_[i] = static_cast<float>(kNoise * runtime::normal01(seed_, kNoiseStream, i));
  }
  std::uint64_t draw = 0;
  auto uniform = [&] { return runtime::uniform01(seed_, kPrototypeStream, draw++); };
  // Each wave sin(2 pi (fy v + fx u) + phase) is sin(a_y) cos(b_x) + cos(a_y) sin(b_x): per row
  // and per column tables instead of a sine per pixel (1000 ImageNet prototypes took ~6 s).
  const auto h = static_cast<std::size_t>(format.height);
  const auto w = static_cast<std::size_t>(format.width);
  std::vector<double> row_sin(kWaves * h), row_cos(kWaves * h), col_sin(kWaves * w),
      col_cos(kWaves * w);
  const double scale = 1.0 / std::sqrt(static_cast<double>(kWaves) / 2.0);
  float* out = prototypes_.data();
  for (std::int64_t k = 0; k < format.num_classes; ++k) {
    for (std::int64_t c = 0; c < format.channels; ++c) {
      for (int i = 0; i < kWaves; ++i) {
        const double fy = 0.5 + 2.5 * uniform();
        const double fx = 0.5 + 2.5 * uniform();
        const double phase = 6.283185307179586 * uniform();
        for (std::size_t y = 0; y < h; ++y) {
          const double a =
              6.283185307179586 * fy * static_cast<double>(y) / static_cast<double>(h) + phase;
          row_sin[i * h + y] = std::sin(a);
          row_cos[i * h + y] = std::cos(a);
        }
        for (std::size_t x = 0; x < w; ++x) {
          const double b = 6.283185307179586 * fx * static_cast<double>(x) / static_cast<double>(w);
          col_sin[i * w + x] = std::sin(b);
          col_cos[i * w + x] = std::cos(b);
        }
      }
      for (std::size_t y = 0; y < h; ++y) {
        for (std::size_t x = 0; x < w; ++x) {
          double s = 0.0;
          for (std::size_t i = 0; i < kWaves; ++i) {
            s += row_sin[i * h + y] * col_cos[i * w + x] + row_cos[i * h + y] * col_sin[i * w + x];
          }
          *out++ = static_cast<float>(s * scale);
        }
      }
    }
  }
}

std::uint64_t SyntheticDataset::host_bytes(const SampleFormat& format) noexcept {
  // In long double: classes x channels x height x width may not fit 64 bits.
  const long double floats =
      static_cast<long double>(format.num_classes) * static_cast<long double>(format.channels) *
          static_cast<long double>(format.height) * static_cast<long double>(format.width) +
      static_cast<long double>(kNoiseBank);
  const long double bytes = floats * sizeof(float);
  return bytes >= 1.8e19L ? std::numeric_limits<std::uint64_t>::max()
                          : static_cast<std::uint64_t>(bytes);
}

void SyntheticDataset::seek(std::int64_t sample) {
  VDNN_EXPECTS(sample >= 0, "a sample number is never negative, got " + std::to_string(sample));
  next_sample_ = static_cast<std::uint64_t>(sample);
}

void SyntheticDataset::next_batch(std::int64_t batch, void* images, std::int32_t* labels) {
  const std::int64_t numel = format_.sample_numel();
  for (std::int64_t i = 0; i < batch; ++i, ++next_sample_) {
    const std::uint64_t sample =
        split_ == Split::Test ? kFirstTestSample + next_sample_ % kTestImages : next_sample_;
    const auto label = static_cast<std::int32_t>(runtime::uniform01(seed_, kLabelStream, sample) *
                                                 static_cast<double>(format_.num_classes));
    labels[i] = label;
    const float* proto = prototypes_.data() + label * numel;
    float* img = static_cast<float*>(images) + i * numel;
    const auto offset = static_cast<std::size_t>(runtime::mix64(seed_ ^ sample));
    if (augment_ != Augment::CropFlip) {
      add_noise(proto, noise_.data(), offset, static_cast<std::size_t>(numel), img);
      continue;
    }
    const CropFlip crop = draw_crop_flip(seed_, 0, sample);
    const std::int64_t h = format_.height;
    const std::int64_t w = format_.width;
    write_cropped(
        format_.channels, h, w, crop,
        [&](std::int64_t c, std::int64_t y, std::int64_t x) {
          const auto j = static_cast<std::size_t>((c * h + y) * w + x);
          return proto[j] + noise_[(offset + j) % kNoiseBank];
        },
        [](std::int64_t) { return 0.0f; }, img);
  }
}

}  // namespace vdnn::models
