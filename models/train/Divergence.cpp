// The divergence check of the training loop and its message.
#include "models/train/Divergence.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace vdnn::models {

void check_loss_finite(double loss, std::int64_t iteration, std::int64_t iterations, double lr) {
  if (std::isfinite(loss)) return;
  std::ostringstream what;
  what << "the loss is " << (std::isnan(loss) ? "NaN" : "infinite") << " at iteration "
       << iteration + 1 << "/" << iterations << " (\"iter\": " << iteration
       << " in metrics.jsonl, learning rate " << lr << "): training diverged; try a smaller --lr";
  throw Diverged(what.str(), iteration);
}

void check_gradients_finite(graph::Session& session, std::int64_t iteration,
                            std::int64_t iterations, std::vector<float>& scratch) {
  const std::vector<graph::Parameter>& params = session.executor().parameters().all();
  std::vector<const graph::Parameter*> bad;
  for (const graph::Parameter& p : params) {
    if (!p.trainable()) continue;
    scratch.resize(static_cast<std::size_t>(p.spec.shape.numel()));
    session.context().compute().copy_async(scratch.data(), p.grad.data(), p.grad.bytes());
    session.context().compute().synchronize();
    const bool finite =
        std::all_of(scratch.begin(), scratch.end(), [](float g) { return std::isfinite(g); });
    if (!finite) bad.push_back(&p);
  }
  if (bad.empty()) return;
  std::ostringstream what;
  what << "a gradient is not finite at iteration " << iteration + 1 << "/" << iterations
       << " (\"iter\": " << iteration << " in metrics.jsonl): " << bad.back()->name
       << " is the nearest to the loss of " << bad.size() << " non-finite parameter gradients"
       << "; training diverged; try a smaller --lr";
  throw Diverged(what.str(), iteration);
}

}  // namespace vdnn::models
