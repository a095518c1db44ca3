// The output directory of `vdnn train`, checked before any setup so that a bad --out fails fast.
#pragma once

#include <filesystem>

namespace vdnn::tools {

/// Creates `dir` (and its parents) if needed and checks that it is a directory this process may
/// create files in. Throws runtime::InvalidArgument (a usage error) naming the directory and the
/// reason: it exists and is not a directory, it cannot be created, or it is not writable.
void prepare_output_dir(const std::filesystem::path& dir);

}  // namespace vdnn::tools
