// CLI11 validators the vdnn command line adds to CLI11's own.
#pragma once

#include <CLI/CLI.hpp>

namespace vdnn::tools {

/// Accepts a number that is neither NaN nor infinite. Chain it before CLI11's range checks, which
/// let NaN through (every comparison with NaN is false).
CLI::Validator finite_number();

}  // namespace vdnn::tools
