// WorkerPool: every iteration of a loop runs once, a queued loop's iterations start while the loop
// before it still has one running (no barrier between loops), each loop rethrows its own lowest
// failing iteration, and destruction with loops queued returns.
#include "models/data/WorkerPool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

TEST(WorkerPool, RunsEveryIterationOnceOnAWorkerOfItsOwn) {
  WorkerPool pool(3);
  EXPECT_EQ(pool.workers(), 3U);
  std::vector<std::atomic<int>> runs(100);
  std::atomic<bool> worker_in_range{true};
  pool.run(100, [&](std::size_t worker, std::int64_t i) {
    if (worker >= 3) worker_in_range = false;
    ++runs[static_cast<std::size_t>(i)];
  });
  for (const std::atomic<int>& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_TRUE(worker_in_range);
  pool.run(0, [](std::size_t, std::int64_t) { FAIL() << "an empty loop ran an iteration"; });
}

// Loop A's first iteration blocks until loop B is done: with a barrier at A's end, B could never
// start, and its wait would never return.
TEST(WorkerPool, AQueuedLoopRunsWhileTheLoopBeforeItFinishes) {
  WorkerPool pool(2);
  std::promise<void> b_done;
  std::shared_future<void> released = b_done.get_future().share();
  std::atomic<int> a_runs{0};
  const WorkerPool::Ticket a = pool.submit(3, [&](std::size_t, std::int64_t i) {
    if (i == 0) released.wait();
    ++a_runs;
  });
  std::atomic<int> b_runs{0};
  const WorkerPool::Ticket b = pool.submit(5, [&](std::size_t, std::int64_t) { ++b_runs; });
  pool.wait(b);
  EXPECT_EQ(b_runs.load(), 5);
  EXPECT_LT(a_runs.load(), 3);  // A's first iteration still waits
  b_done.set_value();
  pool.wait(a);
  EXPECT_EQ(a_runs.load(), 3);
  EXPECT_THROW(pool.wait(a), runtime::InvalidArgument);  // each loop is waited for once
}

TEST(WorkerPool, EachLoopRethrowsItsOwnLowestFailingIteration) {
  WorkerPool pool(1);  // one worker: iterations run in order
  std::vector<std::int64_t> ran;
  const WorkerPool::Ticket failing = pool.submit(10, [&](std::size_t, std::int64_t i) {
    ran.push_back(i);
    if (i == 3 || i == 5) throw std::runtime_error("iteration " + std::to_string(i));
  });
  std::atomic<int> fine{0};
  const WorkerPool::Ticket other = pool.submit(4, [&](std::size_t, std::int64_t) { ++fine; });
  try {
    pool.wait(failing);
    FAIL() << "a failing loop returned";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "iteration 3");
  }
  EXPECT_EQ(ran, (std::vector<std::int64_t>{0, 1, 2, 3}));  // the rest skipped
  pool.wait(other);
  EXPECT_EQ(fine.load(), 4);
}

// Fails by hanging: the threads stop after the iterations they started, leaving the rest.
TEST(WorkerPool, DestructionWithLoopsQueuedReturns) {
  std::atomic<int> runs{0};
  {
    WorkerPool pool(2);
    for (int loop = 0; loop < 2; ++loop) {
      pool.submit(100000, [&](std::size_t, std::int64_t) { ++runs; });
    }
  }
  const int after = runs.load();  // the counter outlives the pool: nothing runs once it is gone
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(runs.load(), after);
}

}  // namespace
}  // namespace vdnn::models
