// The checkpoint directory of a training run: names, the newest good one, pruning.
#include "tools/cli/CheckpointFiles.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "models/train/Safetensors.hpp"
#include "runtime/Error.hpp"

namespace vdnn::tools {
namespace {

constexpr const char* kPrefix = "iter-";
constexpr const char* kSuffix = ".safetensors";

std::filesystem::path directory(const std::filesystem::path& out) { return out / "checkpoints"; }

// The iteration in a checkpoint's file name, -1 for other files.
std::int64_t iteration_of(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  const std::string prefix = kPrefix;
  const std::string suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return -1;
  }
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  return std::stoll(digits);
}

}  // namespace

std::filesystem::path checkpoint_path(const std::filesystem::path& out, std::int64_t iteration) {
  char name[64];
  std::snprintf(name, sizeof name, "%s%09lld%s", kPrefix, static_cast<long long>(iteration),
                kSuffix);
  return directory(out) / name;
}

std::vector<std::filesystem::path> checkpoints_newest_first(const std::filesystem::path& out) {
  std::vector<std::pair<std::int64_t, std::filesystem::path>> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory(out), error)) {
    const std::int64_t iteration = iteration_of(entry.path());
    if (iteration >= 0 && entry.is_regular_file()) found.emplace_back(iteration, entry.path());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a > b; });
  std::vector<std::filesystem::path> paths;
  for (auto& [iteration, path] : found) paths.push_back(std::move(path));
  return paths;
}

std::filesystem::path latest_good_checkpoint(const std::filesystem::path& out) {
  for (const std::filesystem::path& path : checkpoints_newest_first(out)) {
    try {
      static_cast<void>(models::read_safetensors(path, true));
      return path;
    } catch (const models::CheckpointError& e) {
      std::fprintf(stderr, "vdnn: skipping a damaged checkpoint: %s\n", e.what());
    }
  }
  throw runtime::InvalidArgument("--resume latest: no good checkpoint in " +
                                 directory(out).string());
}

void prune_checkpoints(const std::filesystem::path& out, std::int64_t keep) {
  const std::vector<std::filesystem::path> paths = checkpoints_newest_first(out);
  for (std::size_t i = static_cast<std::size_t>(keep); i < paths.size(); ++i) {
    std::error_code ignored;  // a checkpoint that cannot be removed stays; training goes on
    std::filesystem::remove(paths[i], ignored);
  }
}

}  // namespace vdnn::tools
