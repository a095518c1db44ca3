// StopSignal: SIGINT and SIGTERM during `vdnn train`: the first asks the loop to stop after the
// current step (it writes a checkpoint and exits with kExitInterrupted); a second exits at once.
#pragma once

#include <string>

#include "runtime/Error.hpp"

namespace vdnn::tools {

/// Training stopped on a signal after writing a checkpoint (exit code kExitInterrupted).
class Interrupted : public runtime::Error {
 public:
  using Error::Error;
};

/// Installs the handlers while alive and restores the previous ones after, unless a signal came:
/// then they stay until the process ends, so that a second signal during the checkpoint and the
/// teardown still exits at once with 128 + signal. One at a time per
/// process (signal dispositions are process-wide); the handler only sets an atomic flag, and on
/// a second signal calls _exit(128 + signal) without running destructors, so a checkpoint being
/// written stays a temporary file and the last good one stays as it was.
class StopSignal {
 public:
  StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;
  StopSignal(StopSignal&&) = delete;
  StopSignal& operator=(StopSignal&&) = delete;
  ~StopSignal();

  /// True once a signal arrived.
  bool requested() const noexcept;
  /// "SIGINT" or "SIGTERM" (empty before a signal).
  std::string name() const;
};

}  // namespace vdnn::tools
