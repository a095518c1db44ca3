// The torchvision reference fixtures that tools/torchvision_reference.py writes into
// tests/models/data/image/fixtures/ (see that script for what each file holds).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vdnn::models {

inline std::string torchvision_fixture(const std::string& name) {
  return std::string(VDNN_SOURCE_DIR) + "/tests/models/data/image/fixtures/" + name;
}

inline constexpr const char* kMakeFixtures =
    "; make the fixtures with `python3 tools/torchvision_reference.py "
    "tests/models/data/image/fixtures` (torch, torchvision, PIL, numpy)";

/// The bytes of a fixture file; a failed test naming the file and the command when it is missing.
inline std::vector<std::uint8_t> read_torchvision_fixture(const std::string& name) {
  std::ifstream file(torchvision_fixture(name), std::ios::binary);
  EXPECT_TRUE(file.good()) << "cannot read " << torchvision_fixture(name) << kMakeFixtures;
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

inline nlohmann::json read_torchvision_json(const std::string& name) {
  const std::vector<std::uint8_t> bytes = read_torchvision_fixture(name);
  return nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
}

}  // namespace vdnn::models
