// EpochOrder: the order in which one epoch visits a dataset's samples, a pure function of the seed
// and the epoch (Note [Data loading]).
#pragma once

#include <cstdint>
#include <vector>

namespace vdnn::models {

/// Fills `order` (its size is the dataset's) with 0 .. n - 1, shuffled for `epoch` when `shuffled`:
/// Fisher-Yates with counter-based draws, so the same seed gives the same epochs on every machine
/// and thread.
void epoch_order(std::uint64_t seed, std::uint64_t epoch, bool shuffled,
                 std::vector<std::int64_t>& order);

}  // namespace vdnn::models
