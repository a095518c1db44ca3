// Progress: the per-iteration status line on stderr (rewritten in place on a terminal).
#pragma once

#include <cstdint>

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

 private:
  std::int64_t total_;
  bool terminal_;
  bool dirty_ = false;
};

}  // namespace vdnn::tools
