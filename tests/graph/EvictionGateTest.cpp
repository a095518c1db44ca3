// EvictionGate: before device bytes rise under a budget, the compute stream waits for the oldest
// managed evictions until those still in flight fit the room; without a budget it never waits.
#include "graph/EvictionGate.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "runtime/cpu/CpuContext.hpp"

namespace vdnn::graph {
namespace {

// Records which events work on it was told to wait for; runs nothing.
class RecordingStream final : public runtime::Stream {
 public:
  const std::string& name() const noexcept override { return name_; }
  void enqueue(std::function<void()> /*task*/) override {}
  void copy_async(void* /*dst*/, const void* /*src*/, std::size_t /*bytes*/) override {}
  void wait(const runtime::Event& event) override { waited.push_back(&event); }
  void synchronize() override {}
  std::vector<const runtime::Event*> waited;

 private:
  std::string name_ = "compute";
};

// The event `tensor`'s eviction completes.
const runtime::Event* eviction_event(const runtime::ResidentTensor& tensor) {
  RecordingStream probe;
  tensor.wait_for_eviction(probe);
  return probe.waited.front();
}

class EvictionGateTest : public ::testing::Test {
 protected:
  runtime::cpu::CpuContext context_;
  runtime::ResidentTensor a_{"a", runtime::Shape{15}, context_};  // 60 bytes each
  runtime::ResidentTensor b_{"b", runtime::Shape{15}, context_};
  runtime::ResidentTensor c_{"c", runtime::Shape{15}, context_};
  RecordingStream compute_;
};

TEST_F(EvictionGateTest, WaitsForTheOldestEvictionsUntilTheRestFit) {
  EvictionGate gate(100);
  gate.evicted(a_, 60);
  gate.evicted(b_, 60);
  gate.before_rise(compute_, 0);  // 120 in flight, 100 of room: a must be gone
  ASSERT_EQ(compute_.waited.size(), 1u);
  EXPECT_EQ(compute_.waited[0], eviction_event(a_));
  gate.before_rise(compute_, 30);  // 60 in flight fit in 70
  EXPECT_EQ(compute_.waited.size(), 1u);
  gate.before_rise(compute_, 50);  // 60 do not fit in 50: b too
  ASSERT_EQ(compute_.waited.size(), 2u);
  EXPECT_EQ(compute_.waited[1], eviction_event(b_));
}

TEST_F(EvictionGateTest, WaitsOnlyForTheLastOfSeveralOnTheSameStream) {
  EvictionGate gate(100);
  gate.evicted(a_, 60);
  gate.evicted(b_, 60);
  gate.evicted(c_, 60);
  gate.before_rise(compute_, 100);  // no room at all: all three, one wait on the newest
  ASSERT_EQ(compute_.waited.size(), 1u);
  EXPECT_EQ(compute_.waited[0], eviction_event(c_));
}

TEST_F(EvictionGateTest, ReturnedMapsAndAClearedGateAskForNothing) {
  EvictionGate gate(100);
  gate.evicted(a_, 60);
  gate.evicted(b_, 60);
  gate.returned(a_);  // whatever brings it back waits for its eviction itself
  gate.before_rise(compute_, 40);
  EXPECT_TRUE(compute_.waited.empty());
  gate.clear();
  gate.before_rise(compute_, 100);
  EXPECT_TRUE(compute_.waited.empty());
}

TEST_F(EvictionGateTest, WithoutABudgetNeverWaits) {
  EvictionGate gate(0);
  gate.evicted(a_, 60);
  gate.before_rise(compute_, 1000);
  EXPECT_TRUE(compute_.waited.empty());
}

}  // namespace
}  // namespace vdnn::graph
