// RunComparison: how the data-parallel GPU tests compare runs (several ranks against one GPU, or
// one GPU against itself in another summation order): per-tensor FP32 tolerance ratios, the
// equivalence they assert, and a printed diagnosis (losses step by step, the worst tensors).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "models/train/cuda/NcclRanks.hpp"

namespace vdnn::models::run_compare {

using nccl_test::RankRun;

/// Per tensor, ||a - b|| <= kRelative ||b|| + kAbsolute sqrt(numel). Both sides are FP32 (TF32
/// off, deterministic algorithms) summed in different orders: cuDNN at batch 8 against 16, each
/// rank's batch-norm moments merged in double (exact to ~1e-15) against one double tree, the
/// gradient mean against one batch's sum. Those differ by ~1e-7 relative a step; ten SGD steps
/// through 53 batch norms carry them to ~1e-6..1e-5, so 1e-4 passes with margin, while per-rank
/// statistics (no --sync-bn) move the running buffers by ~1e-1 relative.
inline constexpr double kRelative = 1e-4;
inline constexpr double kAbsolute = 1e-6;  // tensors near 0 (the batch norms' biases early on)

/// ||a - b|| / (kRelative ||b|| + kAbsolute sqrt(numel)): at most 1 within tolerance.
inline double tolerance_ratio(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff) /
         (kRelative * std::sqrt(norm) + kAbsolute * std::sqrt(static_cast<double>(b.size())));
}

inline bool ends_with(const std::string& name, const std::string& suffix) {
  return name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The largest tolerance_ratio of `run`'s tensors against `one`'s over those whose name ends in
/// `suffix` ("" for all).
inline double worst_ratio(const RankRun& run, const RankRun& one, const std::string& suffix) {
  double worst = 0.0;
  for (std::size_t t = 0; t < one.tensors.size(); ++t) {
    if (!ends_with(one.names[t], suffix)) continue;
    worst = std::max(worst, tolerance_ratio(run.tensors[t], one.tensors[t]));
  }
  return worst;
}

/// The mean of the ranks' losses at each step (each rank's loss is its own batch's mean).
inline std::vector<double> mean_losses(const std::vector<RankRun>& ranks) {
  std::vector<double> mean(ranks.at(0).losses.size(), 0.0);
  for (const RankRun& run : ranks) {
    for (std::size_t s = 0; s < mean.size(); ++s) mean[s] += run.losses[s];
  }
  for (double& m : mean) m /= static_cast<double>(ranks.size());
  return mean;
}

// "name ratio" lines of the `count` largest tolerance ratios of a's tensors against b's (of
// `values` or `first_gradients`, skipping empty ones).
inline std::string worst_lines(const RankRun& a, const RankRun& b,
                               std::vector<std::vector<float>> RankRun::*tensors,
                               std::size_t count) {
  std::vector<std::pair<double, std::string>> ratios;
  for (std::size_t t = 0; t < b.names.size(); ++t) {
    if ((b.*tensors)[t].empty()) continue;
    ratios.emplace_back(tolerance_ratio((a.*tensors)[t], (b.*tensors)[t]), b.names[t]);
  }
  std::sort(ratios.rbegin(), ratios.rend());
  std::ostringstream out;
  for (std::size_t i = 0; i < std::min(count, ratios.size()); ++i) {
    out << "    " << std::setw(12) << std::setprecision(4) << ratios[i].first << "  "
        << ratios[i].second << "\n";
  }
  return out.str();
}

/// The diagnosis of `run` (losses `losses`) against `reference`: both losses and their relative
/// difference at each step, then the 10 worst tolerance ratios (1: at the tolerance) of the
/// gradients after the first step (the same weights on both sides: where an error enters) and of
/// the values after the last. Printed by the tests, so that one GPU run is a diagnosis.
inline std::string report(const std::string& title, const std::vector<double>& losses,
                          const RankRun& run, const RankRun& reference) {
  std::ostringstream out;
  out << "== " << title << "\n  step  loss                reference           relative\n";
  for (std::size_t s = 0; s < reference.losses.size(); ++s) {
    out << "  " << std::setw(4) << s << "  " << std::setprecision(12) << std::setw(18) << losses[s]
        << "  " << std::setw(18) << reference.losses[s] << "  " << std::setprecision(3)
        << (losses[s] - reference.losses[s]) / reference.losses[s] << "\n";
  }
  out << "  worst gradients after step 0 (tolerance ratio, tensor):\n"
      << worst_lines(run, reference, &RankRun::first_gradients, 10)
      << "  worst values after the last step:\n"
      << worst_lines(run, reference, &RankRun::tensors, 10);
  return out.str();
}

/// report() of the ranks' first run and mean losses against `one`, on stdout.
inline void print(const std::string& title, const std::vector<RankRun>& ranks, const RankRun& one) {
  if (!ranks.at(0).error.empty() || !one.error.empty()) return;  // the checks name the error
  std::cout << report(title, mean_losses(ranks), ranks[0], one) << std::flush;
}

/// The largest tolerance ratio of `run`'s first-step gradients against `reference`'s.
inline double worst_gradient_ratio(const RankRun& run, const RankRun& reference) {
  double worst = 0.0;
  for (std::size_t t = 0; t < reference.first_gradients.size(); ++t) {
    if (reference.first_gradients[t].empty()) continue;
    worst = std::max(worst, tolerance_ratio(run.first_gradients[t], reference.first_gradients[t]));
  }
  return worst;
}

/// The ranks' weights alike bitwise (the same averaged gradients from the same start; their running
/// statistics are their own without --sync-bn); from the same weights, every gradient of their
/// first step within tolerance of `one`'s, and their mean loss too at the first two steps (the
/// forward pass, then the forward after one update).
inline void expect_first_step_as_one(const std::vector<RankRun>& ranks, const RankRun& one) {
  for (const RankRun& run : ranks) ASSERT_EQ(run.error, "");
  ASSERT_EQ(one.error, "");
  ASSERT_EQ(ranks[0].names, one.names);
  for (const RankRun& run : ranks) {
    for (std::size_t t = 0; t < one.first_gradients.size(); ++t) {
      if (one.first_gradients[t].empty()) continue;
      EXPECT_EQ(run.tensors[t], ranks[0].tensors[t]) << one.names[t];
    }
  }
  for (std::size_t t = 0; t < one.first_gradients.size(); ++t) {
    if (one.first_gradients[t].empty()) continue;
    EXPECT_LE(tolerance_ratio(ranks[0].first_gradients[t], one.first_gradients[t]), 1.0)
        << one.names[t];
  }
  const std::vector<double> losses = mean_losses(ranks);
  for (std::size_t s = 0; s < 2; ++s) {
    EXPECT_NEAR(losses[s], one.losses[s], kRelative * std::abs(one.losses[s])) << s;
  }
}

/// The ranks alike bitwise; their mean loss at every step and every tensor at the end within
/// tolerance of `one`'s (for runs without chaos: at rate 0, the forward passes alone).
inline void expect_trains_as_one(const std::vector<RankRun>& ranks, const RankRun& one) {
  for (const RankRun& run : ranks) ASSERT_EQ(run.error, "");
  ASSERT_EQ(one.error, "");
  for (const RankRun& run : ranks) EXPECT_EQ(run.flat(), ranks[0].flat());
  ASSERT_EQ(ranks[0].names, one.names);
  const std::vector<double> losses = mean_losses(ranks);
  for (std::size_t s = 0; s < one.losses.size(); ++s) {
    EXPECT_NEAR(losses[s], one.losses[s], kRelative * std::abs(one.losses[s])) << s;
  }
  for (std::size_t t = 0; t < one.tensors.size(); ++t) {
    EXPECT_LE(tolerance_ratio(ranks[0].tensors[t], one.tensors[t]), 1.0) << one.names[t];
  }
}

}  // namespace vdnn::models::run_compare
