// Setup's parts and their seconds, and the status lines a person sees while they run.
#include "graph/SetupProgress.hpp"

#include <algorithm>

namespace vdnn::graph {

SetupProgress::SetupProgress(Sink sink) : sink_(std::move(sink)) {}

void SetupProgress::begin(const std::string& part, const std::string& what) {
  end();
  const auto found =
      std::find_if(parts_.begin(), parts_.end(), [&](const auto& p) { return p.first == part; });
  running_ = static_cast<std::size_t>(found - parts_.begin());
  if (found == parts_.end()) parts_.emplace_back(part, 0.0);
  started_ = Clock::now();
  if (sink_) sink_(what, false);
}

void SetupProgress::count(const std::string& what, int done, int total) {
  if (sink_) sink_(what + " " + std::to_string(done) + "/" + std::to_string(total), true);
}

void SetupProgress::end() {
  if (running_ >= parts_.size()) return;
  parts_[running_].second += std::chrono::duration<double>(Clock::now() - started_).count();
  running_ = parts_.size();
}

double SetupProgress::total() const noexcept {
  double seconds = 0.0;
  for (const auto& p : parts_) seconds += p.second;
  return seconds;
}

}  // namespace vdnn::graph
