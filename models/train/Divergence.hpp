// Divergence: training stops at the first non-finite loss instead of reporting success.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/Session.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {

/// The loss became NaN or infinite (exit code 4 in the CLI; stop and report it). what() names the
/// iteration.
class Diverged : public runtime::Error {
 public:
  Diverged(const std::string& what, std::int64_t iteration) : Error(what), iteration_(iteration) {}
  /// Zero-based, as "iter" in metrics.jsonl.
  std::int64_t iteration() const noexcept { return iteration_; }

 private:
  std::int64_t iteration_;
};

/// Throws Diverged when `loss`, the loss of zero-based iteration `iteration` of `iterations`
/// trained at learning rate `lr`, is not finite.
void check_loss_finite(double loss, std::int64_t iteration, std::int64_t iterations, double lr);

/// Reads every trainable parameter's gradient of the last step back to the host (on the compute
/// stream, which it synchronizes) and throws Diverged when one holds a NaN or an infinity, naming
/// the parameter nearest the loss that does (where backward met it first) and how many do.
/// `scratch` is reused host memory. For `--check-gradients`: it costs a copy of every gradient.
void check_gradients_finite(graph::Session& session, std::int64_t iteration,
                            std::int64_t iterations, std::vector<float>& scratch);

}  // namespace vdnn::models
