// Batches and a DataSource of the caller's own for the API tests: sample s is a pure function of
// s, written in any element type and layout (the same values: the f32 ones are exact in bf16).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <vdnn/Batch.hpp>
#include <vdnn/DataSource.hpp>
#include <vector>

namespace vdnn::testing {

/// Byte (c, h, w) of sample `s`; its float is (byte - 128) / 64 (at most 8 significant bits).
inline std::uint8_t sample_byte(std::int64_t s, std::int64_t c, std::int64_t h, std::int64_t w) {
  return static_cast<std::uint8_t>((s * 31 + c * 7 + h * 3 + w * 5) % 256);
}

inline std::int32_t sample_label(std::int64_t s) { return static_cast<std::int32_t>(s % 10); }

/// Writes samples first .. first + size - 1 as `type` in `layout` into `images`.
inline void write_samples(std::int64_t first, std::int64_t size, std::int64_t channels,
                          std::int64_t height, std::int64_t width, ElementType type,
                          ImageLayout layout, void* images) {
  auto* out = static_cast<std::byte*>(images);
  for (std::int64_t n = 0; n < size; ++n) {
    for (std::int64_t c = 0; c < channels; ++c) {
      for (std::int64_t h = 0; h < height; ++h) {
        for (std::int64_t w = 0; w < width; ++w) {
          const std::int64_t i = layout == ImageLayout::NCHW
                                     ? ((n * channels + c) * height + h) * width + w
                                     : ((n * height + h) * width + w) * channels + c;
          const std::uint8_t byte = sample_byte(first + n, c, h, w);
          const float value = (static_cast<float>(byte) - 128.0F) / 64.0F;
          std::uint32_t bits = 0;
          std::memcpy(&bits, &value, sizeof bits);
          const auto half = static_cast<std::uint16_t>(bits >> 16);  // exact: few mantissa bits
          if (type == ElementType::U8) {
            std::memcpy(out + i, &byte, 1);
          } else if (type == ElementType::F32) {
            std::memcpy(out + i * 4, &value, 4);
          } else {
            std::memcpy(out + i * 2, &half, 2);
          }
        }
      }
    }
  }
}

inline std::size_t element_bytes(ElementType type) {
  return type == ElementType::U8 ? 1 : type == ElementType::F32 ? 4 : 2;
}

/// A batch in memory the test owns, and the vdnn::Batch that views it.
struct OwnedBatch {
  std::vector<std::byte> images;
  std::vector<std::int32_t> labels;
  Batch view;
};

/// Batch `index` (samples index x size ...) of a stream of caller batches, in any form.
class CallerBatches {
 public:
  CallerBatches(std::int64_t size, std::int64_t channels, std::int64_t height, std::int64_t width)
      : size_(size), channels_(channels), height_(height), width_(width) {}

  /// Valid as long as this object.
  Batch batch(std::int64_t index, ElementType type, ImageLayout layout) const {
    OwnedBatch& b = owned_.emplace_back();
    const std::int64_t numel = size_ * channels_ * height_ * width_;
    b.images.resize(static_cast<std::size_t>(numel) * element_bytes(type));
    write_samples(index * size_, size_, channels_, height_, width_, type, layout, b.images.data());
    for (std::int64_t n = 0; n < size_; ++n) b.labels.push_back(sample_label(index * size_ + n));
    b.view =
        Batch{b.images.data(), b.labels.data(), size_, channels_, height_, width_, type, layout};
    return b.view;
  }
  /// Batch `index`'s images as F32 NCHW floats.
  std::vector<float> floats(std::int64_t index) const {
    std::vector<float> out(static_cast<std::size_t>(size_ * channels_ * height_ * width_));
    write_samples(index * size_, size_, channels_, height_, width_, ElementType::F32,
                  ImageLayout::NCHW, out.data());
    return out;
  }

 private:
  std::int64_t size_, channels_, height_, width_;
  mutable std::deque<OwnedBatch> owned_;
};

/// A DataSource of the samples above, in its element type; it seeks unless told not to, and
/// throws std::out_of_range at batch fail_at() when set.
class CountingSource final : public DataSource {
 public:
  explicit CountingSource(ElementType type, bool seekable = true)
      : type_(type), seekable_(seekable) {}

  ElementType element_type() const override { return type_; }
  void next_batch(const BatchFormat& f, void* images, std::int32_t* labels) override {
    if (drawn_ == fail_at_) throw std::out_of_range("batch " + std::to_string(drawn_.load()));
    write_samples(next_, f.size, f.channels, f.height, f.width, f.type, f.layout, images);
    for (std::int64_t n = 0; n < f.size; ++n) labels[n] = sample_label(next_ + n);
    next_ += f.size;
    ++drawn_;
  }
  bool seek(std::int64_t sample) override {
    if (seekable_) next_ = sample;
    return seekable_;
  }
  std::string description() const override { return "counting samples"; }

  void fail_at(std::int64_t batch) { fail_at_ = batch; }
  std::int64_t batches_drawn() const { return drawn_; }

 private:
  ElementType type_;
  bool seekable_;
  std::int64_t next_ = 0;
  std::atomic<std::int64_t> drawn_{0};
  std::int64_t fail_at_ = -1;
};

}  // namespace vdnn::testing
