// Finite-difference gradient checks for CPU layers in double: every analytic input and parameter
// gradient is compared with central differences of L = sum(output * R).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "layers/LayerSpec.hpp"

namespace vdnn::test {

/// One layer configuration to check on the CPU backend in F64. Inputs hold distinct values spaced
/// far wider than the difference step, so no difference straddles a kink (ReLU at 0, max-pool
/// ties); trainable parameters are uniform in [-1, 1], buffers uniform in [0.5, 1.5].
struct GradCheckCase {
  layers::LayerSpec spec;
  std::vector<runtime::Shape> input_shapes;
  bool training = true;
  std::uint64_t seed = 7;  // data, parameters, labels, R and LayerOptions::seed
  std::uint64_t step = 3;  // ForwardArgs::step and BackwardArgs::step
  /// L = output_weight * sum(output) when set (a loss); otherwise R is uniform in [-1, 1].
  std::optional<double> output_weight{};
};

/// Success when every analytic gradient of every input and trainable parameter matches central
/// differences: |analytic - numeric| <= tolerance * max(|analytic|, |numeric|, 1e-2). Backward
/// gets only the views backward_needs() declares and gradient tensors pre-filled with NaN, so a
/// gradient element left unwritten fails. The failure names the worst element.
::testing::AssertionResult gradients_match(const GradCheckCase& c, double tolerance = 1e-6);

/// Success when backward with GradTarget::accumulate = true leaves every input gradient equal to
/// its previous contents plus the gradient an overwriting backward writes.
::testing::AssertionResult accumulate_adds(const GradCheckCase& c);

}  // namespace vdnn::test
