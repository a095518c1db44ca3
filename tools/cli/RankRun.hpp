// RankRun: `vdnn train` as one rank of a run of several processes (issue 27): joining the run,
// stopping every rank after the same step, and the loop of a rank other than 0, which writes
// nothing.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "models/train/Trainer.hpp"
#include "runtime/Communicator.hpp"
#include "runtime/Rendezvous.hpp"
#include "tools/cli/StopSignal.hpp"
#include "tools/cli/TrainCommand.hpp"

namespace vdnn::tools {

/// Joins the run this process is a rank of (torchrun, mpirun or --gpus's launcher: `launch`):
/// the communicator (--nccl-timeout, --deterministic) `options`' executor averages gradients
/// over, on the rank's GPU, and with --sync-bn takes batch norm's statistics over. Null for one
/// process. Throws as models::make_communicator.
std::unique_ptr<runtime::Communicator> join_run(const std::optional<runtime::LaunchConfig>& launch,
                                                const TrainOptions& o,
                                                models::TrainerOptions& options);

/// Whether to stop after this step: on a signal here or, with other ranks, on any of them
/// (every rank asks after every step, so they all stop after the same one). Throws
/// runtime::CommunicatorError.
bool stopping(runtime::Communicator* communicator, const StopSignal& stop);

/// The signal that stops this process, which with several ranks may have come to another one.
std::string signal_name(const StopSignal& stop);

/// A rank other than 0: the same steps (and evaluations) as rank 0, nothing written; a signal
/// stops it after the step rank 0 checkpoints (Interrupted). Throws the trainer's errors;
/// returns 0.
int train_quietly(models::Trainer& trainer, const TrainOptions& o);

}  // namespace vdnn::tools
