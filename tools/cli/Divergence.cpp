// The divergence check of the training loop and its message.
#include "tools/cli/Divergence.hpp"

#include <cmath>
#include <sstream>

namespace vdnn::tools {

void check_loss_finite(double loss, std::int64_t iteration, std::int64_t iterations, double lr) {
  if (std::isfinite(loss)) return;
  std::ostringstream what;
  what << "the loss is " << (std::isnan(loss) ? "NaN" : "infinite") << " at iteration "
       << iteration + 1 << "/" << iterations << " (\"iter\": " << iteration
       << " in metrics.jsonl, learning rate " << lr << "): training diverged; try a smaller --lr";
  throw Diverged(what.str(), iteration);
}

}  // namespace vdnn::tools
