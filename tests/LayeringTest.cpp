// The folder layering tools -> models -> graph -> layers -> runtime, with the public API
// (models/api) above models: fails on any upward include.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

namespace {

namespace fs = std::filesystem;

TEST(Layering, NoUpwardIncludes) {
  const std::map<std::string, int> rank = {
      {"runtime", 0}, {"layers", 1}, {"graph", 2}, {"models", 3}, {"tools", 4}};
  const std::regex include_re(R"re(^\s*#\s*include\s*"([a-z]+)/)re");
  int files = 0;
  for (const auto& [folder, level] : rank) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(VDNN_SOURCE_DIR) / folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".hpp" && ext != ".cpp" && ext != ".cu" && ext != ".cuh") continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      int number = 0;
      while (std::getline(in, line)) {
        ++number;
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const auto target = rank.find(m[1].str());
        if (target == rank.end()) continue;
        EXPECT_LE(target->second, level)
            << entry.path().string() << ":" << number << " includes " << m[1].str() << "/ from "
            << folder << "/ (allowed: tools -> models -> graph -> layers -> runtime)";
      }
    }
  }
  EXPECT_GT(files, 20);  // the walk really saw the tree
}

// The public API (models/api, headers <vdnn/...>) sits above models/: nothing below it and
// nothing in tools/ includes it, so the library's internals never depend on their own facade.
TEST(Layering, PublicApiIsOnTop) {
  const std::regex api_re(R"re(^\s*#\s*include\s*(<vdnn/|"models/api/))re");
  const fs::path api = fs::path(VDNN_SOURCE_DIR) / "models" / "api";
  int files = 0;
  for (const char* folder : {"runtime", "layers", "graph", "models", "tools"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(VDNN_SOURCE_DIR) / folder)) {
      if (!entry.is_regular_file()) continue;
      if (entry.path().string().rfind(api.string(), 0) == 0) continue;
      const std::string ext = entry.path().extension().string();
      if (ext != ".hpp" && ext != ".cpp" && ext != ".cu" && ext != ".cuh") continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      while (std::getline(in, line)) {
        EXPECT_FALSE(std::regex_search(line, api_re))
            << entry.path().string() << " includes the public API: " << line;
      }
    }
  }
  EXPECT_GT(files, 20);
}

}  // namespace
