// Progress: the per-iteration status line on stderr (rewritten in place on a terminal), and
// setup's status lines before it.
#pragma once

#include <cstdint>
#include <string>

#include "graph/SetupProgress.hpp"

namespace vdnn::tools {

/// Writes "iter 12/50  loss 2.1034  acc 0.188  312.4 img/s" to stderr: rewritten in place with
/// '\r' when stderr is a terminal, one plain line per call otherwise.
class Progress {
 public:
  explicit Progress(std::int64_t total_iters);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  Progress(Progress&&) = delete;
  Progress& operator=(Progress&&) = delete;
  ~Progress();

  void update(std::int64_t iter, double loss, double accuracy, double images_per_s);

  /// A sink for setup's lines ("vdnn: setup: measuring convolutions 23/53"): counts rewrite the
  /// line in place on a terminal and are left out of logs, where each part gets one line. The
  /// Progress must outlive the sink's use.
  graph::SetupProgress::Sink setup_sink();

 private:
  std::int64_t total_;
  bool terminal_;
  bool dirty_ = false;
};

}  // namespace vdnn::tools
