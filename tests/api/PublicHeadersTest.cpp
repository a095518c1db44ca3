// The public headers (models/api/include/vdnn) include only the standard library and each other,
// so that embedding vdnn needs no Eigen, nlohmann/json, CLI11, cuDNN or CUDA runtime headers.
// (CMake also compiles each one alone: the public_header_compiles_alone_* tests.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace {

namespace fs = std::filesystem;

// <cstdint>, <vector>: a standard header has neither a directory nor an extension.
bool standard_header(const std::string& name) {
  return name.find('/') == std::string::npos && name.find('.') == std::string::npos;
}

TEST(PublicHeaders, IncludeOnlyTheStandardLibraryAndEachOther) {
  const std::regex include_re(R"re(^\s*#\s*include\s*([<"])([^>"]+)[>"])re");
  int headers = 0;
  for (const auto& entry :
       fs::directory_iterator(fs::path(VDNN_SOURCE_DIR) / "models/api/include/vdnn")) {
    ++headers;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const std::string name = m[2].str();
      const bool ours = m[1].str() == "<" && name.rfind("vdnn/", 0) == 0;
      EXPECT_TRUE(ours || (m[1].str() == "<" && standard_header(name)))
          << entry.path().filename().string() << " includes " << m[1].str() << name;
    }
  }
  EXPECT_GE(headers, 7);  // Batch, DataSource, Error, Network, Predictor, Trainer, vdnn
}

}  // namespace
