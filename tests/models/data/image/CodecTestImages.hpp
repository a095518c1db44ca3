// Test images and comparisons for the codec tests: a smooth picture with a few edges, crops,
// PSNR, and the message of the DataError a call throws.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/data/image/ImageDecoder.hpp"
#include "models/data/image/RgbImage.hpp"
#include "runtime/Error.hpp"

namespace vdnn::test {

/// A width x height picture of smooth colour waves and a bright rectangle (sharp edges), the
/// kind JPEG compresses well.
inline models::RgbImage test_picture(std::int64_t width, std::int64_t height) {
  models::RgbImage image;
  image.width = width;
  image.height = height;
  image.pixels.resize(static_cast<std::size_t>(width * height * 3));
  for (std::int64_t y = 0; y < height; ++y) {
    std::uint8_t* row = image.row(y);
    for (std::int64_t x = 0; x < width; ++x) {
      const bool inside = x > width / 3 && x < width / 2 && y > height / 4 && y < height / 2;
      row[3 * x + 0] =
          inside ? 240
                 : static_cast<std::uint8_t>(128 + 90 * std::sin(static_cast<double>(x) / 17.0));
      row[3 * x + 1] =
          inside ? 230
                 : static_cast<std::uint8_t>(120 + 80 * std::cos(static_cast<double>(y) / 23.0));
      row[3 * x + 2] = static_cast<std::uint8_t>((x * 255 / width + y * 255 / height) / 2);
    }
  }
  return image;
}

/// The pixels of `box` of `image`.
inline models::RgbImage crop(const models::RgbImage& image, const models::PixelBox& box) {
  models::RgbImage out;
  out.width = box.width;
  out.height = box.height;
  for (std::int64_t y = box.top; y < box.top + box.height; ++y) {
    const std::uint8_t* row = image.row(y) + 3 * box.left;
    out.pixels.insert(out.pixels.end(), row, row + 3 * box.width);
  }
  return out;
}

/// Each pixel replaced by its ITU-R 601 luma in all three channels (what a gray JPEG holds).
inline models::RgbImage luma(const models::RgbImage& image) {
  models::RgbImage out = image;
  for (std::size_t i = 0; i < out.pixels.size(); i += 3) {
    const double l =
        0.299 * image.pixels[i] + 0.587 * image.pixels[i + 1] + 0.114 * image.pixels[i + 2];
    const auto v = static_cast<std::uint8_t>(std::lround(l));
    out.pixels[i] = out.pixels[i + 1] = out.pixels[i + 2] = v;
  }
  return out;
}

/// Peak signal-to-noise ratio in dB of two images of one size (200 when equal).
inline double psnr(const models::RgbImage& a, const models::RgbImage& b) {
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  if (a.pixels.size() != b.pixels.size() || a.pixels.empty()) return 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) {
    const double d = static_cast<double>(a.pixels[i]) - b.pixels[i];
    sum += d * d;
  }
  const double mse = sum / static_cast<double>(a.pixels.size());
  return mse == 0.0 ? 200.0 : 10.0 * std::log10(255.0 * 255.0 / mse);
}

/// The message of the runtime::DataError `call()` throws; a failure when it throws nothing or
/// something else.
template <typename Call>
std::string data_error_of(Call&& call) {
  try {
    call();
  } catch (const runtime::DataError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a DataError, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected a DataError, nothing was thrown";
  return "";
}

/// The CRC-32 of PNG chunks.
inline std::uint32_t crc32(const std::uint8_t* data, std::size_t size) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/// `png` with a chunk of `type` holding `data` right after IHDR; its length field says
/// `claimed_length` (default: the data's), its CRC is right.
inline std::vector<std::uint8_t> with_png_chunk(const std::vector<std::uint8_t>& png,
                                                const char* type,
                                                const std::vector<std::uint8_t>& data,
                                                std::uint32_t claimed_length = 0) {
  const std::uint32_t length =
      claimed_length != 0 ? claimed_length : static_cast<std::uint32_t>(data.size());
  std::vector<std::uint8_t> chunk;
  for (int i = 0; i < 4; ++i) chunk.push_back(static_cast<std::uint8_t>(length >> (24 - 8 * i)));
  chunk.insert(chunk.end(), type, type + 4);
  chunk.insert(chunk.end(), data.begin(), data.end());
  const std::uint32_t crc = crc32(chunk.data() + 4, chunk.size() - 4);
  for (int i = 0; i < 4; ++i) chunk.push_back(static_cast<std::uint8_t>(crc >> (24 - 8 * i)));
  std::vector<std::uint8_t> out = png;
  const std::size_t after_ihdr = 8 + 4 + 4 + 13 + 4;
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(after_ihdr), chunk.begin(), chunk.end());
  return out;
}

/// decode_image() of bytes.
inline models::RgbImage decode(const std::vector<std::uint8_t>& file,
                               const std::string& name = "test.jpg") {
  return models::decode_image(file.data(), file.size(), name);
}

/// Writes `bytes` to `path`, making its directories first.
inline void write_file(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

}  // namespace vdnn::test
