// Checkpoint: a session's parameters, BatchNorm statistics and optimizer state saved to and loaded
// from a safetensors file with PyTorch's tensor names (see models/train/Safetensors.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "graph/Session.hpp"
#include "models/train/Safetensors.hpp"

namespace vdnn::models {

/// What a checkpoint records besides tensors, in its metadata ("vdnn.iteration", "vdnn.seed",
/// "vdnn.config"; save_checkpoint adds "vdnn.optimizer", the session's optimizer_name).
struct CheckpointState {
  std::int64_t iteration = 0;  // steps trained so far
  std::uint64_t seed = 0;      // the run's seed (parameter init, data order, dropout)
  std::string config_json;     // the caller's network/run config, verbatim
};

struct LoadOptions {
  /// Parameters and BatchNorm statistics only (--init-from): optimizer tensors and
  /// num_batches_tracked are ignored whether present or not, the iteration is not restored and a
  /// file without a vdnn checksum (written by PyTorch) is accepted.
  bool weights_only = false;
};

/// The tensor name of a trainable parameter's optimizer state `state`, PyTorch's state_dict key
/// in "optimizer.<name>.<state>": state "momentum_buffer" (SGD, LARS), "exp_avg", "exp_avg_sq"
/// and "step" (AdamW).
std::string optimizer_tensor_name(const std::string& parameter, const std::string& state);

/// Writes every parameter and buffer under its ParameterStore name (F32), for each BatchNorm
/// layer "<node>.num_batches_tracked" (I64, shape [], = state.iteration), and each trainable
/// parameter's optimizer state under optimizer_tensor_name (F32, zeros before the first step):
/// SGD's and LARS's momentum_buffer, AdamW's exp_avg, exp_avg_sq and step (shape [], =
/// state.iteration, as torch.optim.AdamW's float step); plus `state` and the optimizer's name.
/// Copies device data back on the session's compute stream, which it synchronizes. The write is
/// atomic (write_file_atomically). Throws CheckpointError; what the stream throws.
void save_checkpoint(const std::filesystem::path& path, graph::Session& session,
                     const CheckpointState& state, const WriteProgress& progress = {});

/// Reads and validates `path`, checks that it holds exactly the tensors save_checkpoint would
/// write for this session (names, dtypes, shapes) and copies them in on the compute stream (which
/// it synchronizes). A full load also sets the executor's step count to the iteration, so the
/// next update uses the loaded optimizer state. Returns the recorded state (zeros and empty where
/// a foreign file has none). Throws CheckpointError: malformed or corrupted file, a full load of
/// a file written by another optimizer (no "vdnn.optimizer": SGD), or one error listing every
/// missing, extra and mismatched tensor; nothing is copied in when it throws.
CheckpointState load_checkpoint(const std::filesystem::path& path, graph::Session& session,
                                const LoadOptions& options = {});

}  // namespace vdnn::models
