// The host memory check made before a run allocates: what it counts per backend and policy, and
// the message when the machine is too small.
#include "graph/MemoryCheck.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <numeric>

#include "graph/Planner.hpp"
#include "graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

std::uint64_t total(const std::vector<HostNeed>& needs) {
  return std::accumulate(needs.begin(), needs.end(), std::uint64_t{0},
                         [](std::uint64_t sum, const HostNeed& n) { return sum + n.bytes; });
}

TEST(MemoryCheck, CountsTheDevicePoolOnlyOnTheCpuBackend) {
  const Graph g = Graph::build(testing::small_residual_net(), 4);
  const Plan plan = make_plan(g, PlanRequest{});
  const std::uint64_t staging = g.input_shape().bytes(runtime::DType::F32) + 4 * 4;
  const std::vector<HostNeed> cpu = host_needs(g, Policy::Baseline, 0, layers::Backend::Cpu);
  const std::vector<HostNeed> cuda = host_needs(g, Policy::Baseline, 0, layers::Backend::Cuda);
  EXPECT_EQ(total(cuda), staging + plan.pinned_bytes);
  EXPECT_EQ(total(cpu), staging + plan.pinned_bytes + plan.pool_bytes);
}

TEST(MemoryCheck, OffloadsNeedPinnedMemoryAndABudgetCapsTheCpuPool) {
  const Graph g = Graph::build(testing::small_residual_net(), 4);
  PlanRequest all;
  all.policy = Policy::VdnnAll;
  const Plan plan = make_plan(g, all);
  ASSERT_GT(plan.pinned_bytes, 0u);
  const std::uint64_t staging = g.input_shape().bytes(runtime::DType::F32) + 4 * 4;
  EXPECT_EQ(total(host_needs(g, Policy::VdnnAll, 0, layers::Backend::Cuda)),
            staging + plan.pinned_bytes);
  // Under a budget the pinned bytes are not known without the (slow) budget search: none counted.
  EXPECT_EQ(total(host_needs(g, Policy::VdnnAll, 1000, layers::Backend::Cpu)), staging + 1000);
}

TEST(MemoryCheck, PassesWhatFitsAndNamesNumbersItemsAndTensorsOtherwise) {
  const Graph g = Graph::build(testing::small_residual_net(), 4);
  const std::vector<HostNeed> dataset{{"the synthetic dataset", std::uint64_t{5} << 40}};
  const runtime::HostMemory unlimited{std::numeric_limits<std::uint64_t>::max(), "test"};
  EXPECT_NO_THROW(
      check_host_memory(g, Policy::Baseline, 0, layers::Backend::Cpu, dataset, unlimited));
  try {
    check_host_memory(g, Policy::Baseline, 0, layers::Backend::Cpu, dataset,
                      {std::uint64_t{1} << 30, "MemAvailable in /proc/meminfo"});
    ADD_FAILURE() << "5 TiB passed a 1 GiB machine";
  } catch (const HostMemoryExceeded& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("network test at batch 4 needs at least 5.00 TiB of host memory but "
                        "1.00 GiB is available (MemAvailable in /proc/meminfo): the synthetic "
                        "dataset 5.00 TiB, the device pool"),
              std::string::npos)
        << what;
    // The largest feature maps, largest first and in graph order among equals.
    EXPECT_NE(what.find("the largest feature maps: stem [4, 8, 8, 8] 8.00 KiB, bn [4, 8, 8, 8]"),
              std::string::npos)
        << what;
    EXPECT_EQ(e.bytes_limit(), std::uint64_t{1} << 30);
    EXPECT_GT(e.bytes_requested(), std::uint64_t{5} << 40);
  }
  // A budget error's type: the CLI maps every OutOfMemory to exit code 3.
  EXPECT_THROW(check_host_memory(g, Policy::Baseline, 0, layers::Backend::Cuda, dataset,
                                 {std::uint64_t{1} << 30, "test"}),
               runtime::OutOfMemory);
}

TEST(MemoryCheck, ReadsTheMachinesAvailableMemory) {
  const runtime::HostMemory machine = runtime::available_host_memory();
  EXPECT_GT(machine.available_bytes, 0u);
  EXPECT_FALSE(machine.source.empty());
}

}  // namespace
}  // namespace vdnn::graph
