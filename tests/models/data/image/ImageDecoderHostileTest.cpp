// Hostile files for ImageDecoder: empty, random, not an image, truncated, corrupt, decompression
// bombs (headers claiming huge sizes), too many scans. Each is a runtime::DataError whose message
// names the file and says what was wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "models/data/image/CodecTestImages.hpp"
#include "models/data/image/ImageDecoder.hpp"
#include "models/data/image/JpegEncoder.hpp"
#include "models/data/image/PngEncoder.hpp"

namespace vdnn::models {
namespace {

using Bytes = std::vector<std::uint8_t>;
using test::data_error_of;
using test::test_picture;

Bytes jpeg(bool progressive = false) {
  JpegEncoding e;
  e.progressive = progressive;
  return encode_jpeg(test_picture(203, 157), e);
}

// The first `fraction` of `file`.
Bytes prefix(const Bytes& file, double fraction) {
  const auto size = static_cast<std::ptrdiff_t>(static_cast<double>(file.size()) * fraction);
  return Bytes(file.begin(), file.begin() + size);
}

// The message of the DataError that reading the header, or else decoding, throws.
std::string refusal(const Bytes& file, const std::string& name, const DecodeLimits& limits = {}) {
  return data_error_of([&] {
    const ImageInfo info = read_image_info(file.data(), file.size(), name, limits);
    decode_region(file.data(), file.size(), name, {0, 0, info.height, info.width}, 1, 1, limits);
  });
}

::testing::AssertionResult mentions(const std::string& message,
                                    std::initializer_list<const char*> fragments) {
  for (const char* fragment : fragments) {
    if (message.find(fragment) == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << message << "' lacks '" << fragment << "'";
    }
  }
  return ::testing::AssertionSuccess();
}

// The offset of JPEG marker 0xFF `code`.
std::size_t marker(const Bytes& file, std::uint8_t code) {
  for (std::size_t i = 0; i + 1 < file.size(); ++i) {
    if (file[i] == 0xFF && file[i + 1] == code) return i;
  }
  ADD_FAILURE() << "no marker 0xFF 0x" << std::hex << int{code};
  return 0;
}

// Where the entropy-coded data of the first scan starts.
std::size_t scan_data(const Bytes& file) {
  const std::size_t sos = marker(file, 0xDA);
  return sos + 2 + (file[sos + 2] << 8 | file[sos + 3]);
}

void put16(Bytes& file, std::size_t at, unsigned v) {
  file[at] = static_cast<std::uint8_t>(v >> 8);
  file[at + 1] = static_cast<std::uint8_t>(v);
}

void put32(Bytes& file, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) file[at + i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}

TEST(ImageDecoderHostile, EmptyFile) {
  EXPECT_TRUE(mentions(refusal({}, "empty.jpg"), {"empty.jpg: empty file"}));
}

TEST(ImageDecoderHostile, RandomBytes) {
  std::mt19937 rng(5);
  Bytes noise(4096);
  for (auto& b : noise) b = static_cast<std::uint8_t>(rng());
  noise[0] = 0x42;
  EXPECT_TRUE(mentions(refusal(noise, "noise.jpg"), {"noise.jpg: not a JPEG or PNG image"}));
  // Noise behind a JPEG or PNG signature gets to the decoders, which refuse it.
  Bytes fake_jpeg = noise;
  std::copy_n("\xFF\xD8\xFF", 3, fake_jpeg.begin());
  EXPECT_TRUE(mentions(refusal(fake_jpeg, "fake.jpg"), {"fake.jpg: corrupt JPEG"}));
  Bytes fake_png = noise;
  std::copy_n("\x89PNG\r\n\x1A\n", 8, fake_png.begin());
  EXPECT_TRUE(mentions(refusal(fake_png, "fake.png"), {"fake.png: corrupt PNG"}));
}

TEST(ImageDecoderHostile, NotAnImageWithAJpgName) {
  const std::string text = "hello, I am a text file";
  EXPECT_TRUE(mentions(refusal(Bytes(text.begin(), text.end()), "photo.jpg"),
                       {"photo.jpg: not a JPEG or PNG image (starts with bytes 68 65 6c 6c)"}));
  const std::string gif = "GIF89a\x01\x00\x01\x00";
  EXPECT_TRUE(mentions(refusal(Bytes(gif.begin(), gif.end()), "anim.jpg"),
                       {"anim.jpg: not a JPEG or PNG image", "GIF"}));
}

TEST(ImageDecoderHostile, TruncatedJpegs) {
  for (const bool progressive : {false, true}) {
    const Bytes file = jpeg(progressive);
    for (const double fraction : {0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99}) {
      const Bytes cut = prefix(file, fraction);
      EXPECT_TRUE(mentions(refusal(cut, "cut.jpg"), {"cut.jpg: "})) << fraction;
    }
    for (const std::size_t missing : {1, 2}) {  // the end-of-image marker, or half of it
      const Bytes cut(file.begin(), file.end() - static_cast<std::ptrdiff_t>(missing));
      EXPECT_TRUE(mentions(refusal(cut, "cut.jpg"), {"cut.jpg: truncated JPEG"})) << missing;
    }
    // A box above the cut, whose rows are all there, is refused too.
    const Bytes cut = prefix(file, 0.8);
    EXPECT_TRUE(mentions(data_error_of([&] {
                           decode_region(cut.data(), cut.size(), "top.jpg", {0, 0, 16, 203}, 1, 1);
                         }),
                         {"top.jpg: truncated JPEG"}))
        << progressive;
  }
}

TEST(ImageDecoderHostile, CorruptJpegEntropyData) {
  Bytes file = jpeg();
  const std::size_t middle = (scan_data(file) + file.size()) / 2;
  std::fill_n(file.begin() + static_cast<std::ptrdiff_t>(middle), 32, std::uint8_t{0xFF});
  EXPECT_TRUE(
      mentions(refusal(file, "corrupt.jpg"), {"corrupt.jpg: corrupt JPEG (Corrupt JPEG data"}));
  Bytes marker_inside = jpeg();
  put16(marker_inside, middle, 0xFFD3);  // a restart marker where none belongs
  EXPECT_TRUE(mentions(refusal(marker_inside, "rst.jpg"), {"rst.jpg: corrupt JPEG"}));
}

TEST(ImageDecoderHostile, HarmlessJpegWarningsAreNotErrors) {
  const Bytes file = jpeg();
  const RgbImage pixels = test::decode(file);
  Bytes padded = file;  // "Corrupt JPEG data: 5 extraneous bytes before marker 0xd9"
  padded.insert(padded.end() - 2, 5, std::uint8_t{0});
  EXPECT_EQ(test::decode(padded).pixels, pixels.pixels);
  Bytes odd_sos = file;  // Se = 0 in a sequential file: "Invalid SOS parameters"
  odd_sos[scan_data(odd_sos) - 2] = 0;
  EXPECT_EQ(test::decode(odd_sos).pixels, pixels.pixels);
}

TEST(ImageDecoderHostile, JpegHeaderClaimingAHugeImage) {
  Bytes file = jpeg();
  const std::size_t sof = marker(file, 0xC0);
  put16(file, sof + 5, 60000);  // height
  put16(file, sof + 7, 60000);  // width
  const std::string expected =
      "bomb.jpg: the header claims 60000x60000 = 3600000000 pixels, over the limit of 178956970";
  EXPECT_TRUE(mentions(refusal(file, "bomb.jpg"), {expected.c_str()}));
  EXPECT_TRUE(
      mentions(data_error_of([&] {
                 decode_region(file.data(), file.size(), "bomb.jpg", {0, 0, 100, 100}, 1, 1);
               }),
               {expected.c_str()}));
  put16(file, sof + 5, 65535);
  put16(file, sof + 7, 65535);
  EXPECT_TRUE(mentions(refusal(file, "max.jpg"),
                       {"max.jpg: corrupt JPEG (Maximum supported image dimension"}));
  put16(file, sof + 7, 0);
  EXPECT_TRUE(mentions(refusal(file, "zero.jpg"), {"zero.jpg: "}));
}

TEST(ImageDecoderHostile, PngHeaderClaimingAHugeImage) {
  Bytes file = encode_png(test_picture(64, 48));
  put32(file, 16, 100000);  // IHDR width
  put32(file, 20, 100000);  // IHDR height
  put32(file, 29, test::crc32(file.data() + 12, 17));
  EXPECT_TRUE(mentions(refusal(file, "bomb.png"),
                       {"bomb.png: the header claims 100000x100000 = 10000000000 pixels"}));
}

TEST(ImageDecoderHostile, PngChunkClaimingAGigabyte) {
  // A text chunk claiming 1 GiB: skipped (and the file found cut short), never allocated.
  const Bytes file = test::with_png_chunk(encode_png(test_picture(64, 48)), "zTXt", {1, 2, 3},
                                          std::uint32_t{1} << 30);
  EXPECT_TRUE(mentions(refusal(file, "text.png"), {"text.png: corrupt PNG"}));
}

TEST(ImageDecoderHostile, LimitsAreTheCallers) {
  const Bytes file = jpeg(true);
  DecodeLimits limits;
  limits.max_pixels = 1000;
  EXPECT_TRUE(mentions(refusal(file, "a.jpg", limits),
                       {"a.jpg: the header claims 203x157", "limit of 1000"}));
  limits = {};
  limits.max_file_bytes = 100;
  EXPECT_TRUE(mentions(refusal(file, "b.jpg", limits), {"b.jpg: ", "over the limit of 100"}));
  limits = {};
  limits.max_scans = 3;  // libjpeg's simple progression writes 10 scans
  EXPECT_TRUE(mentions(refusal(file, "c.jpg", limits), {"c.jpg: corrupt JPEG (more than 3 scans"}));
}

TEST(ImageDecoderHostile, TruncatedAndCorruptPngs) {
  const Bytes file = encode_png(test_picture(203, 157));
  for (const double fraction : {0.001, 0.01, 0.1, 0.5, 0.9, 0.99}) {
    const Bytes cut = prefix(file, fraction);
    EXPECT_TRUE(mentions(refusal(cut, "cut.png"), {"cut.png: "})) << fraction;
  }
  Bytes flipped = file;
  flipped[flipped.size() / 2] ^= 0x5A;  // inside IDAT: its CRC no longer matches
  EXPECT_TRUE(mentions(refusal(flipped, "crc.png"), {"crc.png: corrupt PNG"}));
}

}  // namespace
}  // namespace vdnn::models
