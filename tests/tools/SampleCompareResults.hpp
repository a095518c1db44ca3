// A hand-made CompareResults for the report tests and the sample report: 3 policies x 2 batches
// under one budget (one cell does not fit), a max-batch search and a memory timeline.
#pragma once

#include <cstddef>

#include "tools/compare/CompareResults.hpp"

namespace vdnn::test {

/// The budget of every sample cell and of the timeline: 4 GiB.
inline constexpr std::uint64_t kSampleBudget = 4ULL << 30;
/// The name of the timeline's first layer, which needs escaping in HTML.
inline constexpr const char* kAwkwardLayer = "a<b&\"c";

/// Policies baseline, vdnn-conv, vdnn-all at batches 64 and 128; baseline at 128 does not fit.
/// The timeline has `timeline_points` points (at least 2), half forward, half backward, the first
/// named kAwkwardLayer.
tools::CompareResults sample_compare_results(std::size_t timeline_points = 300);

}  // namespace vdnn::test
