// Exit codes of the vdnn command line, and the one place where errors become exit codes.
#pragma once

#include <exception>

namespace vdnn::tools {

enum ExitCode : int {
  kExitOk = 0,
  kExitRuntimeError = 1,  // anything else that went wrong while running
  kExitUsage = 2,         // bad command line, bad config, bad option value
  kExitDoesNotFit = 3,    // the network does not fit the memory budget or the machine
  kExitDiverged = 4,      // training stopped at a non-finite loss
  kExitInterrupted = 5,   // SIGINT/SIGTERM: the step finished, a checkpoint was written
  /// Several processes (issue 27): another rank failed, died or hung past --nccl-timeout, or the
  /// ranks could not meet; `--gpus N`'s launcher exits with it naming the first rank that failed.
  kExitRankFailed = 6,
};

/// Prints `error` to stderr with a prefix saying what kind of problem it is and returns the
/// exit code for it. Call from a catch block with std::current_exception().
int report_error(const std::exception_ptr& error) noexcept;

}  // namespace vdnn::tools
