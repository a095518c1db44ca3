// Checkpoint: a session's parameters, BatchNorm statistics and SGD velocities saved to and loaded
// from a safetensors file with PyTorch's tensor names (see models/train/Safetensors.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "graph/Session.hpp"
#include "models/train/Safetensors.hpp"

namespace vdnn::models {

/// What a checkpoint records besides tensors, in its metadata ("vdnn.iteration", "vdnn.seed",
/// "vdnn.config").
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

/// The tensor name of a trainable parameter's SGD velocity: "optimizer.<name>.momentum_buffer".
std::string momentum_buffer_name(const std::string& parameter);

/// Writes every parameter and buffer under its ParameterStore name (F32), for each BatchNorm
/// layer "<node>.num_batches_tracked" (I64, shape [], = state.iteration), and each trainable
/// parameter's velocity under momentum_buffer_name (zeros before the first step), plus `state`.
/// Copies device data back on the session's compute stream, which it synchronizes. The write is
/// atomic (write_file_atomically). Throws CheckpointError; what the stream throws.
void save_checkpoint(const std::filesystem::path& path, graph::Session& session,
                     const CheckpointState& state, const WriteProgress& progress = {});

/// Reads and validates `path`, checks that it holds exactly the tensors save_checkpoint would
/// write for this session (names, dtypes, shapes) and copies them in on the compute stream (which
/// it synchronizes). A full load also sets the executor's step count to the iteration, so the
/// next SGD step uses the loaded velocities. Returns the recorded state (zeros and empty where a
/// foreign file has none). Throws CheckpointError: malformed or corrupted file, or one error
/// listing every missing, extra and mismatched tensor; nothing is copied in when it throws.
CheckpointState load_checkpoint(const std::filesystem::path& path, graph::Session& session,
                                const LoadOptions& options = {});

}  // namespace vdnn::models
