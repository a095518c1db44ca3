// LocalCommunicatorGroup: sums in rank order with the same bits on every rank, rank 0's bytes
// broadcast, and an aborted, late or mismatched rank named by every other rank's error, no wait
// longer than the timeout.
#include "runtime/LocalCommunicator.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cpu/CpuStream.hpp"

namespace vdnn::runtime {
namespace {

using std::chrono::milliseconds;

// Runs body(rank, endpoint, stream) on one thread per rank, each with its own CPU stream; the
// per-rank error messages ("" where none) and failed ranks (-1 where none).
struct Outcome {
  std::vector<std::string> errors;
  std::vector<int> failed_ranks;
};
Outcome run_ranks(LocalCommunicatorGroup& group, int size,
                  const std::function<void(int, Communicator&, Stream&)>& body) {
  Outcome out{std::vector<std::string>(static_cast<std::size_t>(size)),
              std::vector<int>(static_cast<std::size_t>(size), -1)};
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      cpu::CpuStream stream("compute");
      try {
        body(r, group.endpoint(r), stream);
        stream.synchronize();
      } catch (const CommunicatorError& e) {
        out.errors[static_cast<std::size_t>(r)] = e.what();
        out.failed_ranks[static_cast<std::size_t>(r)] = e.failed_rank();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

TEST(LocalCommunicator, AllReduceAddsInRankOrderWithTheSameBitsOnEveryRank) {
  constexpr int kRanks = 4;
  LocalCommunicatorGroup group(kRanks, milliseconds(10000));
  // Element 0's sum depends on the order: ((1e8 + 1) - 1e8) + 1 is 1 in floats, not 2.
  const std::vector<std::vector<float>> in{
      {1e8f, 0.5f, 3.0f}, {1.0f, 0.25f, -1.0f}, {-1e8f, 0.125f, 2.0f}, {1.0f, 0.0625f, 0.0f}};
  std::vector<std::vector<float>> sum = in;
  std::vector<std::vector<float>> mean = in;
  const Outcome out = run_ranks(group, kRanks, [&](int r, Communicator& c, Stream& s) {
    EXPECT_EQ(c.rank(), r);
    EXPECT_EQ(c.size(), kRanks);
    c.all_reduce(s, sum[static_cast<std::size_t>(r)].data(), 3, Reduction::Sum);
    c.all_reduce(s, mean[static_cast<std::size_t>(r)].data(), 3, Reduction::Mean);
  });
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(out.errors[static_cast<std::size_t>(r)], "");
    EXPECT_EQ(sum[static_cast<std::size_t>(r)], (std::vector<float>{1.0f, 0.9375f, 4.0f}));
    EXPECT_EQ(mean[static_cast<std::size_t>(r)], (std::vector<float>{0.25f, 0.234375f, 1.0f}));
  }
}

TEST(LocalCommunicator, BroadcastGivesEveryRankRankZerosBytes) {
  constexpr int kRanks = 3;
  LocalCommunicatorGroup group(kRanks, milliseconds(10000));
  std::vector<std::vector<int>> data{{7, 8, 9}, {0, 0, 0}, {1, 2, 3}};
  run_ranks(group, kRanks, [&](int r, Communicator& c, Stream& s) {
    c.broadcast(s, data[static_cast<std::size_t>(r)].data(), 3 * sizeof(int));
    s.synchronize();
    c.barrier();
  });
  for (const std::vector<int>& d : data) EXPECT_EQ(d, (std::vector<int>{7, 8, 9}));
}

TEST(LocalCommunicator, AllGatherGivesEveryRankEveryValueInRankOrder) {
  constexpr int kRanks = 3;
  LocalCommunicatorGroup group(kRanks, milliseconds(10000));
  std::vector<std::vector<double>> got(kRanks);
  run_ranks(group, kRanks, [&](int r, Communicator& c, Stream& /*s*/) {
    for (int round = 0; round < 3; ++round) {
      got[static_cast<std::size_t>(r)] = c.all_gather(10.0 * round + r);
    }
  });
  for (const std::vector<double>& g : got) EXPECT_EQ(g, (std::vector<double>{20.0, 21.0, 22.0}));
}

TEST(LocalCommunicator, AnAbortEndsEveryOtherRanksPendingAndLaterCollectives) {
  constexpr int kRanks = 4;
  LocalCommunicatorGroup group(kRanks, milliseconds(60000));
  const auto start = std::chrono::steady_clock::now();
  std::vector<float> data(kRanks * 5, 1.0f);
  const Outcome out = run_ranks(group, kRanks, [&](int r, Communicator& c, Stream& s) {
    if (r == 2) {
      std::this_thread::sleep_for(milliseconds(50));  // the others wait in their all-reduce
      c.abort("a layer threw");
      c.raise_if_failed();
      return;
    }
    c.all_reduce(s, data.data() + r * 5, 5, Reduction::Sum);
  });
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(out.failed_ranks[static_cast<std::size_t>(r)], 2) << r;
    EXPECT_NE(out.errors[static_cast<std::size_t>(r)].find("rank 2 aborted: a layer threw"),
              std::string::npos)
        << out.errors[static_cast<std::size_t>(r)];
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));  // no timeout
}

TEST(LocalCommunicator, ARankThatDoesNotComeIsNamedAtTheTimeout) {
  LocalCommunicatorGroup group(3, milliseconds(100));
  const Outcome out = run_ranks(group, 3, [&](int r, Communicator& c, Stream& /*s*/) {
    if (r != 1) c.barrier();
  });
  EXPECT_EQ(out.failed_ranks, (std::vector<int>{1, -1, 1}));
  EXPECT_NE(out.errors[0].find("barrier: rank 1 did not come within 100 ms"), std::string::npos)
      << out.errors[0];
}

TEST(LocalCommunicator, ARankWithAnotherCountIsNamed) {
  LocalCommunicatorGroup group(2, milliseconds(10000));
  std::vector<float> data(8, 1.0f);
  const Outcome out = run_ranks(group, 2, [&](int r, Communicator& c, Stream& s) {
    c.all_reduce(s, data.data() + r * 4, r == 0 ? 4 : 3, Reduction::Sum);
  });
  EXPECT_EQ(out.failed_ranks, (std::vector<int>{1, 1}));
  EXPECT_NE(out.errors[1].find("rank 1 brought 3 elements, rank 0 4"), std::string::npos)
      << out.errors[1];
}

TEST(LocalCommunicator, BadGroupsAndRanksAreRefused) {
  EXPECT_THROW(LocalCommunicatorGroup(0, milliseconds(1)), InvalidArgument);
  EXPECT_THROW(LocalCommunicatorGroup(2, milliseconds(0)), InvalidArgument);
  LocalCommunicatorGroup group(2, milliseconds(1000));
  EXPECT_NO_THROW(group.endpoint(1).raise_if_failed());
  EXPECT_THROW(group.endpoint(2), InvalidArgument);
  cpu::CpuStream stream("compute");
  EXPECT_THROW(group.endpoint(0).all_reduce(stream, nullptr, 4, Reduction::Sum), InvalidArgument);
}

}  // namespace
}  // namespace vdnn::runtime
