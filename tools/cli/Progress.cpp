// The progress line: in place on a terminal, plain lines in logs.
#include "tools/cli/Progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace vdnn::tools {

Progress::Progress(std::int64_t total_iters)
    : total_(total_iters), terminal_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (terminal_ && dirty_) std::fputc('\n', stderr);
}

void Progress::update(std::int64_t iter, double loss, double accuracy, double images_per_s) {
  std::fprintf(stderr, "%siter %lld/%lld  loss %.4f  acc %.3f  %.1f img/s%s",
               terminal_ ? "\r\033[K" : "", static_cast<long long>(iter),
               static_cast<long long>(total_), loss, accuracy, images_per_s, terminal_ ? "" : "\n");
  std::fflush(stderr);
  dirty_ = true;
}

graph::SetupProgress::Sink Progress::setup_sink() {
  return [this](const std::string& line, bool count) {
    if (count && !terminal_) return;
    std::fprintf(stderr, "%svdnn: setup: %s%s", terminal_ ? "\r\033[K" : "", line.c_str(),
                 terminal_ ? "" : "\n");
    std::fflush(stderr);
    dirty_ = true;
  };
}

}  // namespace vdnn::tools
