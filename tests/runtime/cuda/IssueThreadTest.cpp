// The copy streams' issue thread (Note [Issue thread]): posted calls are made in order, errors
// come back at the next drain or synchronize, and events re-recorded on the caller's thread keep
// the program order against waits and records posted before. Skips when there is no CUDA device.
#include "runtime/cuda/IssueThread.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <vector>

#include "runtime/Device.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CudaContext.hpp"

namespace vdnn::runtime::cuda {
namespace {

class IssueThreadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(IssueThreadTest, MakesPostedCallsInPostOrderAndCountsThemDown) {
  IssueThread issuer(0);
  std::vector<int> made;
  std::atomic<int> unissued{0};
  constexpr int kCalls = 5000;
  for (int i = 0; i < kCalls; ++i) issuer.post({[&made, i] { made.push_back(i); }, {&unissued}});
  settle(unissued);
  EXPECT_EQ(unissued.load(), 0);
  issuer.drain();
  ASSERT_EQ(made.size(), static_cast<std::size_t>(kCalls));
  for (int i = 0; i < kCalls; ++i) ASSERT_EQ(made[static_cast<std::size_t>(i)], i);
}

TEST_F(IssueThreadTest, DrainRethrowsTheFirstErrorOnceAndLaterCallsAreStillMade) {
  IssueThread issuer(0);
  std::atomic<int> unissued{0};
  bool last_made = false;
  issuer.post({[] { throw std::runtime_error("first"); }, {&unissued}});
  issuer.post({[] { throw std::runtime_error("second"); }, {&unissued}});
  issuer.post({[&last_made] { last_made = true; }});
  try {
    issuer.drain();
    FAIL() << "drain did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "first");
  }
  EXPECT_TRUE(last_made);
  EXPECT_EQ(unissued.load(), 0);  // thrown calls count down too
  EXPECT_NO_THROW(issuer.drain());
}

// Each round re-records both events right after posting a wait on or a record of them: as separate
// calls, or as one copy (timed in half the rounds), whose mark on compute the issue thread may
// record. Were a posted
// wait to see the next round's record, the copy would wait for compute work that itself waits for
// the copy: the device would hang, and so would the test.
TEST_F(IssueThreadTest, ReRecordedEventsKeepProgramOrderAcrossTheIssueThread) {
  CudaContext context(0);
  constexpr std::size_t kBytes = 1 << 16;
  constexpr int kRounds = 256;
  void* device = nullptr;
  VDNN_CHECK_CUDA(cudaMalloc(&device, kBytes));
  void* host = nullptr;
  VDNN_CHECK_CUDA(cudaMallocHost(&host, kBytes * kRounds));
  const std::unique_ptr<Event> produced = context.make_event(false);
  const std::unique_ptr<Event> started = context.make_event(true);
  const std::unique_ptr<Event> ended = context.make_event(true);
  const std::unique_ptr<Event> copied = context.make_event(false);
  auto* slots = static_cast<unsigned char*>(host);
  for (int round = 0; round < kRounds; ++round) {
    context.compute().enqueue([&, round] {
      VDNN_CHECK_CUDA(cudaMemsetAsync(device, round, kBytes, context.device().compute_stream()));
    });
    void* slot = slots + kBytes * static_cast<std::size_t>(round);
    TimedCopy copy{slot, device, kBytes};
    if (round % 2 == 0) {  // timed, or not: an executor times the copies of some steps only
      copy.started = started.get();
      copy.ended = ended.get();
    }
    copy.done = copied.get();
    // Call by call; as one posted call after a record made here; with the mark recorded there.
    if (round % 3 == 0) {
      produced->record(context.compute());
      context.offload().wait(*produced);
      context.offload().copy_async(slot, device, kBytes);
      copied->record(context.offload());
    } else if (round % 3 == 1) {
      produced->record(context.compute());
      copy.after = {produced.get(), nullptr};
      context.offload().timed_copy(copy);
    } else {
      copy.after_stream = &context.compute();
      copy.mark = produced.get();
      context.offload().timed_copy(copy);
    }
    context.compute().wait(*copied);  // the next memset overwrites what the copy reads
  }
  copied->synchronize();
  EXPECT_TRUE(copied->query());
  EXPECT_GE(ended->seconds_since(*started), 0.0);
  context.offload().synchronize();
  context.compute().synchronize();
  for (int round = 0; round < kRounds; ++round) {
    const unsigned char* slot = slots + kBytes * static_cast<std::size_t>(round);
    ASSERT_EQ(slot[0], static_cast<unsigned char>(round)) << "round " << round;
    ASSERT_EQ(slot[kBytes - 1], static_cast<unsigned char>(round)) << "round " << round;
  }
  VDNN_CHECK_CUDA(cudaFreeHost(host));
  VDNN_CHECK_CUDA(cudaFree(device));
}

TEST_F(IssueThreadTest, APostedCopysErrorComesBackFromTheNextSynchronizeOnce) {
  CudaContext context(0);
  std::vector<unsigned char> source(16);
  context.offload().copy_async(nullptr, source.data(), source.size());
  EXPECT_THROW(context.offload().synchronize(), CudaError);
  EXPECT_NO_THROW(context.offload().synchronize());
}

}  // namespace
}  // namespace vdnn::runtime::cuda
