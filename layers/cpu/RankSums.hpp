// RankSums: sums a CPU layer's per-channel values over the ranks of a group, from inside the
// layer's own work (synchronized batch norm, Note [Data parallelism]).
#pragma once

#include <vector>

#include "runtime/Communicator.hpp"

namespace vdnn::layers::cpu {

/// Replaces each of `values` by its sum over the ranks of `group`, at once on the calling thread
/// (the compute stream's worker, in the layer's forward or backward): every rank must call it in
/// the same order with as many values. The sum is taken in FP32 (what the communicator reduces),
/// in rank order. A null group or a group of one changes nothing. Throws CommunicatorError (a rank
/// failed or is late past the group's timeout).
void sum_over_ranks(runtime::Communicator* group, std::vector<double>& values);

}  // namespace vdnn::layers::cpu
