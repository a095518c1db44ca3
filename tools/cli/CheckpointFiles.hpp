// CheckpointFiles: where `vdnn train` keeps its checkpoints (OUT/checkpoints/iter-<N>.safetensors),
// which one `--resume latest` means, and which ones `--keep` removes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace vdnn::tools {

/// OUT/checkpoints/iter-<iteration, 9 digits>.safetensors.
std::filesystem::path checkpoint_path(const std::filesystem::path& out, std::int64_t iteration);

/// The checkpoints under OUT/checkpoints, newest (highest iteration) first. Never throws for a
/// missing directory (empty list).
std::vector<std::filesystem::path> checkpoints_newest_first(const std::filesystem::path& out);

/// The newest checkpoint under OUT/checkpoints whose file is well-formed with a matching
/// checksum (a damaged newer one is skipped, and said so on stderr). Throws
/// runtime::InvalidArgument when there is none.
std::filesystem::path latest_good_checkpoint(const std::filesystem::path& out);

/// Removes all but the `keep` newest checkpoints (keep >= 1).
void prune_checkpoints(const std::filesystem::path& out, std::int64_t keep);

}  // namespace vdnn::tools
