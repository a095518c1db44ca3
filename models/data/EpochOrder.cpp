// The per-epoch shuffle that every finite dataset shares.
#include "models/data/EpochOrder.hpp"

#include <numeric>
#include <utility>

#include "runtime/Random.hpp"

namespace vdnn::models {

void epoch_order(std::uint64_t seed, std::uint64_t epoch, bool shuffled,
                 std::vector<std::int64_t>& order) {
  std::iota(order.begin(), order.end(), 0);
  if (!shuffled || order.empty()) return;
  for (std::size_t i = order.size() - 1; i > 0; --i) {
    const auto j =
        static_cast<std::size_t>(runtime::uniform01(seed, epoch, i) * static_cast<double>(i + 1));
    std::swap(order[i], order[j]);
  }
}

}  // namespace vdnn::models
