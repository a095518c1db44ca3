// The folder layering tools -> models -> graph -> layers -> runtime: fails on any upward include.
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

}  // namespace
