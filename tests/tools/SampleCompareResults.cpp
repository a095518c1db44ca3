// Builds the sample compare results: plausible numbers in the shape vdnn compare writes them.
#include "tools/SampleCompareResults.hpp"

#include <string>

namespace vdnn::test {
namespace {

using tools::CellResult;
using tools::CellStatus;
using tools::MemoryPoint;

constexpr std::uint64_t kMiB = 1ULL << 20;

CellResult ok_cell(const std::string& policy, std::int64_t batch, double images_per_s,
                   std::uint64_t peak_mib, std::uint64_t offloaded_mib) {
  CellResult cell;
  cell.policy = policy;
  cell.batch = batch;
  cell.budget_bytes = kSampleBudget;
  cell.network = "vgg16";
  cell.images_per_s = images_per_s;
  cell.ms_per_iter = 1000.0 * static_cast<double>(batch) / images_per_s;
  cell.measured_peak_bytes = peak_mib * kMiB;
  cell.predicted_peak_bytes = peak_mib * kMiB;
  cell.offloaded_bytes = offloaded_mib * kMiB;
  cell.prefetched_bytes = offloaded_mib * kMiB;
  cell.offload_gbps = offloaded_mib == 0 ? 0.0 : 11.8;
  cell.prefetch_gbps = offloaded_mib == 0 ? 0.0 : 12.1;
  cell.offload_busy = offloaded_mib == 0 ? 0.0 : 0.42;
  cell.prefetch_busy = offloaded_mib == 0 ? 0.0 : 0.38;
  return cell;
}

// Forward: activations pile up, and once past 900 MiB the policy offloads them.
// Backward: the reverse, prefetching back what the gradients need.
tools::MemoryTimeline sample_timeline(std::size_t count) {
  tools::MemoryTimeline timeline{"vdnn-all", 128, kSampleBudget, {}};
  const std::size_t half = count / 2;
  for (std::size_t i = 0; i < count; ++i) {
    const bool backward = i >= half;
    const std::size_t depth = backward ? count - 1 - i : i;  // distance from the input
    const std::uint64_t produced = 300 * kMiB + 12 * kMiB * depth * 300 / count;
    const std::uint64_t on_device = produced < 900 * kMiB ? produced : 900 * kMiB;
    const std::uint64_t workspace = (i % 7) * 40 * kMiB;
    const std::string name =
        i == 0 ? kAwkwardLayer : "conv" + std::to_string(depth / 3 + 1) + (backward ? "_grad" : "");
    timeline.points.push_back(
        MemoryPoint{name, backward, on_device + workspace, produced - on_device});
  }
  return timeline;
}

}  // namespace

tools::CompareResults sample_compare_results(std::size_t timeline_points) {
  tools::CompareResults results;
  results.network = "vgg16";
  results.device = "cuda (NVIDIA H200)";
  results.mode = tools::CompareMode::MaxBatch;
  results.cells = {
      ok_cell("baseline", 64, 1210.0, 3610, 0),      ok_cell("vdnn-conv", 64, 1130.0, 2050, 1500),
      ok_cell("vdnn-all", 64, 1020.0, 1480, 2300),   ok_cell("baseline", 128, 0.0, 0, 0),
      ok_cell("vdnn-conv", 128, 1170.0, 3420, 3000), ok_cell("vdnn-all", 128, 1060.0, 2260, 4600)};
  CellResult& too_big = results.cells[3];
  too_big.status = CellStatus::DoesNotFit;
  too_big.predicted_peak_bytes = 6900 * kMiB;
  too_big.message = "the plan's peak of 6.74 GiB exceeds the budget of 4 GiB";
  results.searches = {
      {"baseline", 72, 1215.0}, {"vdnn-conv", 160, 1150.0}, {"vdnn-all", 256, 1040.0}};
  results.timeline = sample_timeline(timeline_points < 2 ? 2 : timeline_points);
  return results;
}

}  // namespace vdnn::test
