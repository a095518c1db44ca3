// The host-staged test communicator (tests/models/train/cuda/HostStagedCommunicator.hpp) on CPU
// streams: its collectives wait for the stream's earlier work, sum, average and broadcast as the
// in-process group does, and a rank that aborts makes the others' collectives throw, naming it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "models/train/cuda/HostStagedCommunicator.hpp"
#include "runtime/LocalCommunicator.hpp"
#include "runtime/cpu/CpuStream.hpp"

namespace vdnn::test {
namespace {

constexpr int kRanks = 2;

// body(rank, communicator, stream) on one thread per rank, each with a CPU stream of its own.
void on_ranks(const std::function<void(int, runtime::Communicator&, runtime::Stream&)>& body) {
  runtime::LocalCommunicatorGroup group(kRanks, std::chrono::seconds(20));
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      runtime::cpu::CpuStream stream("compute");
      HostStagedCommunicator staged(group.endpoint(r));
      body(r, staged, stream);
    });
  }
  for (std::thread& t : threads) t.join();
}

TEST(HostStagedCommunicator, SumsAveragesAndBroadcastsWhatTheStreamWrote) {
  std::vector<std::vector<float>> sums(kRanks), means(kRanks), copies(kRanks);
  on_ranks([&](int r, runtime::Communicator& c, runtime::Stream& stream) {
    const auto at = static_cast<std::size_t>(r);
    EXPECT_EQ(c.rank(), r);
    EXPECT_EQ(c.size(), kRanks);
    std::vector<float>& sum = sums[at];
    std::vector<float>& mean = means[at];
    std::vector<float>& copy = copies[at];
    sum.assign(3, 0.0f);
    // Written by the stream's work, which the collective must wait for.
    stream.enqueue([&sum, r] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      sum = {1.0f + static_cast<float>(r), 10.0f, -2.0f * static_cast<float>(r)};
    });
    c.all_reduce(stream, sum.data(), sum.size(), runtime::Reduction::Sum);
    mean = {static_cast<float>(4 * r), 1.0f};
    c.all_reduce(stream, mean.data(), mean.size(), runtime::Reduction::Mean);
    copy = {static_cast<float>(r + 5), static_cast<float>(r + 6)};
    c.broadcast(stream, copy.data(), copy.size() * sizeof(float));
    stream.synchronize();
  });
  for (int r = 0; r < kRanks; ++r) {
    const auto at = static_cast<std::size_t>(r);
    EXPECT_EQ(sums[at], (std::vector<float>{3.0f, 20.0f, -2.0f})) << r;
    EXPECT_EQ(means[at], (std::vector<float>{2.0f, 1.0f})) << r;
    EXPECT_EQ(copies[at], (std::vector<float>{5.0f, 6.0f})) << r;
  }
}

TEST(HostStagedCommunicator, ARankThatAbortsMakesTheOthersCollectiveThrowNamingIt) {
  std::vector<int> failed(kRanks, -2);
  on_ranks([&](int r, runtime::Communicator& c, runtime::Stream& stream) {
    if (r == 1) {
      c.abort("its step threw");
      return;
    }
    float value = 1.0f;
    try {
      c.all_reduce(stream, &value, 1, runtime::Reduction::Sum);
    } catch (const runtime::CommunicatorError& e) {
      failed[0] = e.failed_rank();
      EXPECT_NE(std::string(e.what()).find("its step threw"), std::string::npos) << e.what();
    }
  });
  EXPECT_EQ(failed[0], 1);
}

}  // namespace
}  // namespace vdnn::test
