// The safetensors format: hand-built files decode, the writer's layout is the specification's,
// every flipped bit is detected, and malformed files are refused with a message saying why.
#include "models/train/Safetensors.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/train/SafetensorsBytes.hpp"

namespace vdnn::models {
namespace {

using testing::raw_bytes;
using testing::safetensors_bytes;

// Two tensors, as the reference implementation lays them out (sorted names, compact JSON).
std::vector<std::byte> hand_built_file() {
  std::vector<std::byte> data =
      raw_bytes(std::vector<float>{1.5F, -2.0F, 3.25F, 0.0F, 1e-3F, 7.0F});
  const std::vector<std::byte> steps = raw_bytes(std::vector<std::int64_t>{42});
  data.insert(data.end(), steps.begin(), steps.end());
  return safetensors_bytes(
      R"({"__metadata__":{"format":"pt"},"a.weight":{"dtype":"F32","shape":[2,3],)"
      R"("data_offsets":[0,24]},"a.steps":{"dtype":"I64","shape":[],"data_offsets":[24,32]}})",
      data);
}

SafetensorsFile small_file() {
  SafetensorsFile file;
  file.tensors.push_back(
      {"w", TensorDType::F32, {2, 2}, raw_bytes(std::vector<float>{1, 2, 3, 4})});
  file.tensors.push_back({"n", TensorDType::I64, {}, raw_bytes(std::vector<std::int64_t>{5})});
  file.metadata = {{"vdnn.iteration", "5"}};
  return file;
}

std::string decode_error(const std::vector<std::byte>& bytes, bool require_checksum = false) {
  try {
    decode_safetensors(bytes, "'test.safetensors'", require_checksum);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "no error";
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST(Safetensors, AHandBuiltFileDecodes) {
  const SafetensorsFile file = decode_safetensors(hand_built_file(), "hand", false);
  ASSERT_EQ(file.tensors.size(), 2U);
  EXPECT_EQ(file.tensors[0].name, "a.weight");  // data order
  EXPECT_EQ(file.tensors[0].dtype, TensorDType::F32);
  EXPECT_EQ(file.tensors[0].shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(file.tensors[0].data,
            raw_bytes(std::vector<float>{1.5F, -2.0F, 3.25F, 0.0F, 1e-3F, 7.0F}));
  EXPECT_EQ(file.tensors[1].name, "a.steps");
  EXPECT_EQ(file.tensors[1].dtype, TensorDType::I64);
  EXPECT_TRUE(file.tensors[1].shape.empty());
  EXPECT_EQ(file.tensors[1].data, raw_bytes(std::vector<std::int64_t>{42}));
  EXPECT_EQ(file.metadata.at("format"), "pt");
  EXPECT_CONTAINS(decode_error(hand_built_file(), true), "no \"vdnn.checksum\"");
}

TEST(Safetensors, TheWriterLaysOutTheSpecification) {
  const std::vector<std::byte> bytes = encode_safetensors(small_file());
  std::uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= std::to_integer<std::uint64_t>(bytes[i]) << (8 * i);
  EXPECT_EQ(length % 8, 0U);
  const auto* text = reinterpret_cast<const char*>(bytes.data() + 8);
  const nlohmann::json header = nlohmann::json::parse(text, text + length);
  EXPECT_EQ(header["w"]["dtype"], "F32");
  EXPECT_EQ(header["w"]["shape"], nlohmann::json({2, 2}));
  EXPECT_EQ(header["w"]["data_offsets"], nlohmann::json({0, 16}));
  EXPECT_EQ(header["n"]["dtype"], "I64");
  EXPECT_EQ(header["n"]["shape"], nlohmann::json::array());
  EXPECT_EQ(header["n"]["data_offsets"], nlohmann::json({16, 24}));
  EXPECT_EQ(header["__metadata__"]["vdnn.iteration"], "5");
  EXPECT_EQ(header["__metadata__"]["vdnn.checksum"].get<std::string>().size(), 16U);
  EXPECT_EQ(bytes.size(), 8 + length + 24);
  EXPECT_EQ(std::vector<std::byte>(bytes.begin() + 8 + static_cast<std::ptrdiff_t>(length),
                                   bytes.begin() + 8 + static_cast<std::ptrdiff_t>(length) + 16),
            raw_bytes(std::vector<float>{1, 2, 3, 4}));

  const SafetensorsFile back = decode_safetensors(bytes, "round trip", true);
  ASSERT_EQ(back.tensors.size(), 2U);
  EXPECT_EQ(back.tensors[0].name, "w");
  EXPECT_EQ(back.tensors[0].data, small_file().tensors[0].data);
  EXPECT_EQ(back.tensors[1].data, small_file().tensors[1].data);
  EXPECT_EQ(back.metadata, small_file().metadata);  // the checksum is not metadata of the caller's
}

TEST(Safetensors, EveryFlippedBitIsDetected) {
  const std::vector<std::byte> good = encode_safetensors(small_file());
  for (std::size_t at = 0; at < good.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<std::byte> bad = good;
      bad[at] ^= static_cast<std::byte>(1U << bit);
      EXPECT_THROW(decode_safetensors(bad, "flipped", true), CheckpointError)
          << "byte " << at << " bit " << bit;
    }
  }
  std::vector<std::byte> bad = good;
  bad[bad.size() - 3] ^= std::byte{0x10};
  EXPECT_CONTAINS(decode_error(bad, true), "checksum mismatch");
}

TEST(Safetensors, MalformedFilesAreRefusedSayingWhy) {
  const std::vector<std::byte> good = hand_built_file();
  EXPECT_CONTAINS(decode_error({good.begin(), good.begin() + 5}), "truncated: 5 bytes");
  EXPECT_CONTAINS(decode_error({good.begin(), good.end() - 4}),
                  "'a.steps' has data_offsets [24,32] outside the data section of 28 bytes");
  std::vector<std::byte> longer = good;
  longer.resize(good.size() + 4);
  EXPECT_CONTAINS(decode_error(longer), "has 36 bytes but the tensors cover 32");
  EXPECT_CONTAINS(decode_error({good.begin(), good.begin() + 40}), "is larger than the 32 bytes");

  const std::vector<std::byte> data(16);
  const auto with = [&](const std::string& header) { return safetensors_bytes(header, data); };
  EXPECT_CONTAINS(decode_error(with(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                    R"("y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})")),
                  "'y' [4, 12) overlaps tensor 'x'");
  EXPECT_CONTAINS(decode_error(with(R"({"x":{"dtype":"F33","shape":[4],"data_offsets":[0,16]}})")),
                  "unknown dtype \"F33\"");
  EXPECT_CONTAINS(decode_error(with(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})")),
                  "spans 16 bytes but shape [3] of F32 needs 12");
  EXPECT_CONTAINS(decode_error(with(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})")),
                  "bytes [0, 8) of the data section belong to no tensor");
  EXPECT_CONTAINS(decode_error(with(R"({"x":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})")),
                  "outside the data section of 16 bytes");
  EXPECT_CONTAINS(decode_error(with(R"({"x":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})")),
                  "not an array of non-negative integers");
  EXPECT_CONTAINS(decode_error(with(R"({"x":{"dtype":"F32","shape":[4]}})")),
                  "must be an object of exactly");
  EXPECT_CONTAINS(decode_error(with(R"({"__metadata__":{"k":1}})")), "key 'k' is not a string");
  EXPECT_CONTAINS(decode_error(with(R"({"x":)")), "not valid JSON");
  EXPECT_CONTAINS(decode_error(with(R"([1, 2])")), "not a JSON object");

  std::vector<std::byte> huge = good;
  huge[5] = std::byte{1};  // 2^40 bytes of header
  EXPECT_CONTAINS(decode_error(huge), "exceeds the limit");
  EXPECT_CONTAINS(decode_error(good), "no error");
}

TEST(Safetensors, EncodingRefusesWhatItCannotWrite) {
  SafetensorsFile file = small_file();
  file.tensors[0].shape = {3};
  EXPECT_THROW(encode_safetensors(file), CheckpointError);
  file = small_file();
  file.tensors.push_back(file.tensors[0]);
  EXPECT_THROW(encode_safetensors(file), CheckpointError);
  file = small_file();
  file.metadata[kChecksumKey] = "0";
  EXPECT_THROW(encode_safetensors(file), CheckpointError);
}

}  // namespace
}  // namespace vdnn::models
