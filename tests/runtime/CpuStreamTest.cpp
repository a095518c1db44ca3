// CpuStream and CpuEvent: in-order execution, cross-stream ordering through events (also under
// seeded stress delays), error policy, draining destructor and counters. Gates opened by the test
// decide what may have run; no test measures time.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/Error.hpp"
#include "runtime/cpu/CpuEvent.hpp"
#include "runtime/cpu/CpuStream.hpp"

namespace vdnn::runtime::cpu {
namespace {

// How long to wait for something that must happen: only a bug makes it long, and then the test
// fails instead of hanging.
constexpr std::chrono::seconds kHangGuard{60};
// How long to watch for something that must not happen while a gate is closed. A correct
// implementation never does it, whatever the duration; a broken one is caught most of the time.
constexpr std::chrono::milliseconds kNotYet{50};

// A latch the test opens; tasks block on it so the test controls what has run. It opens itself
// when destroyed, so declare it after the streams: a failed assertion then cannot leave a worker
// blocked in the streams' destructors.
class Gate {
 public:
  Gate() : opened_(promise_.get_future().share()) {}
  ~Gate() { open(); }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  Gate(Gate&&) = delete;
  Gate& operator=(Gate&&) = delete;

  void open() {
    if (is_open_) return;
    is_open_ = true;
    promise_.set_value();
  }
  // A task that blocks its worker until open(). It holds its own copy of the shared future.
  std::function<void()> blocker() const {
    return [opened = opened_] { opened.wait(); };
  }

 private:
  std::promise<void> promise_;
  std::shared_future<void> opened_;
  bool is_open_ = false;
};

// Becomes ready when its task runs; lets the host observe "ran" / "not yet" without a data race.
class Flag {
 public:
  std::function<void()> setter() {
    return [this] { promise_.set_value(); };
  }
  bool ready_within(std::chrono::milliseconds timeout) const {
    return future_.wait_for(timeout) == std::future_status::ready;
  }
  bool is_set() const { return ready_within(std::chrono::milliseconds(0)); }

 private:
  std::promise<void> promise_;
  std::shared_future<void> future_ = promise_.get_future().share();
};

StressOptions stress(std::uint64_t seed, std::chrono::microseconds max_delay) {
  StressOptions options;
  options.enabled = true;
  options.seed = seed;
  options.max_delay = max_delay;
  return options;
}

class FakeStream final : public Stream {
 public:
  const std::string& name() const noexcept override { return name_; }
  void enqueue(std::function<void()> /*task*/) override {}
  void copy_async(void* /*dst*/, const void* /*src*/, std::size_t /*bytes*/) override {}
  void wait(const Event& /*event*/) override {}
  void synchronize() override {}

 private:
  std::string name_ = "fake";
};

using FakeEvent = CompletedEvent;  // an event of another backend

TEST(CpuStream, RunsTasksInEnqueueOrder) {
  std::vector<int> order;  // touched only by the worker until synchronize()
  CpuStream stream("compute");
  Gate gate;
  stream.enqueue(gate.blocker());
  for (int i = 0; i < 1000; ++i) stream.enqueue([&order, i] { order.push_back(i); });
  gate.open();
  stream.synchronize();
  std::vector<int> expected(1000);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
  EXPECT_EQ(stream.name(), "compute");
}

TEST(CpuStream, RunsTasksInEnqueueOrderUnderStress) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<int> order;
    CpuStream stream("compute", stress(seed, std::chrono::microseconds(20)));
    for (int i = 0; i < 50; ++i) stream.enqueue([&order, i] { order.push_back(i); });
    stream.synchronize();
    std::vector<int> expected(50);
    std::iota(expected.begin(), expected.end(), 0);
    ASSERT_EQ(order, expected) << "seed " << seed;
  }
}

TEST(CpuStream, EnqueueReturnsBeforeTheTaskRuns) {
  Flag ran;
  CpuStream stream("compute");
  Gate gate;
  stream.enqueue(gate.blocker());
  stream.enqueue(ran.setter());
  EXPECT_FALSE(ran.ready_within(kNotYet));
  gate.open();
  stream.synchronize();
  EXPECT_TRUE(ran.is_set());
}

TEST(CpuStream, CopyAsyncCopiesBytes) {
  std::vector<std::uint8_t> src(4096);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 3);
  std::vector<std::uint8_t> dst(src.size(), 0);
  CpuStream stream("offload");
  stream.copy_async(dst.data(), src.data(), src.size());
  stream.copy_async(nullptr, nullptr, 0);
  stream.synchronize();
  EXPECT_EQ(dst, src);
}

TEST(CpuStream, RejectsAnEmptyTaskAndACopyFromNull) {
  CpuStream stream("compute");
  int x = 0;
  EXPECT_THROW(stream.enqueue(std::function<void()>()), InvalidArgument);
  EXPECT_THROW(stream.copy_async(&x, nullptr, sizeof(x)), InvalidArgument);
  EXPECT_THROW(stream.copy_async(nullptr, &x, sizeof(x)), InvalidArgument);
  EXPECT_THROW(CpuStream("bad", stress(0, std::chrono::microseconds(-1))), InvalidArgument);
  stream.synchronize();
}

TEST(CpuStream, SynchronizeRethrowsTheFirstErrorAndTheStreamStaysUsable) {
  CpuStream stream("compute");
  stream.enqueue([] { throw OutOfMemory("first", 1, 2, 3); });
  stream.enqueue([] { throw std::runtime_error("second"); });
  try {
    stream.synchronize();
    ADD_FAILURE() << "synchronize() did not rethrow";
  } catch (const OutOfMemory& e) {
    EXPECT_STREQ(e.what(), "first");
    EXPECT_EQ(e.bytes_requested(), 1u);
  }
  stream.synchronize();  // the error was reported once and cleared

  bool ran = false;
  stream.enqueue([&ran] { ran = true; });
  stream.synchronize();
  EXPECT_TRUE(ran);
}

TEST(CpuStream, SkipsLaterTasksAndCopiesUntilSynchronizeReportsTheError) {
  int src = 42;
  int dst = 0;
  bool ran = false;
  CpuStream stream("compute");
  CpuEvent after;
  stream.enqueue([] { throw std::runtime_error("boom"); });
  stream.enqueue([&ran] { ran = true; });
  stream.copy_async(&dst, &src, sizeof(src));
  after.record(stream);
  after.synchronize();  // records still complete, so the host cannot deadlock on them
  EXPECT_TRUE(after.query());
  EXPECT_THROW(stream.synchronize(), std::runtime_error);
  EXPECT_FALSE(ran);
  EXPECT_EQ(dst, 0);
  const CpuStreamStats stats = stream.stats();
  EXPECT_EQ(stats.tasks, 1u);
  EXPECT_EQ(stats.copies, 0u);
}

TEST(CpuStream, WaitOnAFailedRecordFailsTheWaitingStream) {
  bool consumer_ran = false;
  CpuStream producer("prefetch");
  CpuStream consumer("compute");
  CpuEvent ready;
  producer.enqueue([] { throw std::runtime_error("copy failed"); });
  ready.record(producer);
  consumer.wait(ready);
  consumer.enqueue([&consumer_ran] { consumer_ran = true; });
  try {
    consumer.synchronize();
    ADD_FAILURE() << "the consumer did not inherit the producer's failure";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'prefetch'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(consumer_ran);
  EXPECT_THROW(producer.synchronize(), std::runtime_error);

  consumer.enqueue([&consumer_ran] { consumer_ran = true; });
  consumer.synchronize();
  EXPECT_TRUE(consumer_ran);
}

TEST(CpuStream, WaitOnANonCpuEventThrows) {
  CpuStream stream("compute");
  FakeEvent event;
  EXPECT_THROW(stream.wait(event), InvalidArgument);
}

TEST(CpuStream, DestructorRunsPendingWork) {
  int count = 0;  // read after the destructor joined the worker
  {
    CpuStream stream("offload");
    Gate gate;  // destroyed, hence opened, just before the stream with all the work still queued
    stream.enqueue(gate.blocker());
    for (int i = 0; i < 100; ++i) stream.enqueue([&count] { ++count; });
  }
  EXPECT_EQ(count, 100);
}

TEST(CpuStream, DestructorLogsAnUnreportedErrorInsteadOfThrowing) {
  testing::internal::CaptureStderr();
  {
    CpuStream stream("offload");
    stream.enqueue([] { throw std::runtime_error("never reported"); });
  }
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("'offload'"), std::string::npos) << log;
  EXPECT_NE(log.find("never reported"), std::string::npos) << log;
}

TEST(CpuStream, CountsTasksCopiesBytesAndBusyTime) {
  std::array<char, 100> src{};
  std::array<char, 100> dst{};
  CpuStream stream("offload");
  CpuEvent event;
  Gate gate;
  stream.enqueue(gate.blocker());  // busy for as long as the gate stays closed
  stream.enqueue([] {});
  stream.copy_async(dst.data(), src.data(), 100);
  event.record(stream);
  stream.wait(event);
  stream.copy_async(dst.data(), src.data(), 28);
  stream.enqueue([] {});
  EXPECT_FALSE(event.query());
  gate.open();
  stream.synchronize();
  const CpuStreamStats stats = stream.stats();
  EXPECT_EQ(stats.tasks, 3u);
  EXPECT_EQ(stats.copies, 2u);
  EXPECT_EQ(stats.bytes_copied, 128u);
  EXPECT_GT(stats.busy.count(), 0);
}

TEST(CpuEvent, NeverRecordedIsComplete) {
  CpuEvent event;
  EXPECT_TRUE(event.query());
  event.synchronize();
  bool ran = false;
  CpuStream stream("compute");
  stream.wait(event);
  stream.enqueue([&ran] { ran = true; });
  stream.synchronize();
  EXPECT_TRUE(ran);
}

TEST(CpuEvent, QueryIsFalseWhilePendingAndTrueAfterSynchronize) {
  CpuStream stream("compute");
  CpuEvent event;
  Gate gate;
  stream.enqueue(gate.blocker());
  event.record(stream);
  EXPECT_FALSE(event.query());
  gate.open();
  event.synchronize();
  EXPECT_TRUE(event.query());
}

TEST(CpuEvent, WaitOrdersWorkAcrossStreams) {
  int x = 0;  // written on "compute", read on "offload": only the event orders them
  int seen = -1;
  Flag reader_ran;
  CpuStream writer("compute");
  CpuStream reader("offload");
  CpuEvent written;
  Gate gate;
  writer.enqueue(gate.blocker());
  writer.enqueue([&x] { x = 42; });
  written.record(writer);
  reader.wait(written);
  reader.enqueue([&x, &seen] { seen = x; });
  reader.enqueue(reader_ran.setter());
  EXPECT_FALSE(reader_ran.ready_within(kNotYet));
  gate.open();
  reader.synchronize();
  EXPECT_EQ(seen, 42);
}

// The offload choreography: compute fills a buffer; the offload stream copies it out once the
// fill's event completed; compute refills it only once the copy's event completed. Any missing
// edge shows up as a wrong value (and as a race under ThreadSanitizer) for some seed.
TEST(CpuEvent, WaitOrdersAnOffloadPipelineUnderStress) {
  constexpr int kSteps = 8;
  constexpr int kWords = 64;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    std::array<int, kWords> device{};
    std::vector<std::array<int, kWords>> host(kSteps);
    CpuStream compute("compute", stress(seed, std::chrono::microseconds(50)));
    CpuStream offload("offload", stress(seed, std::chrono::microseconds(50)));
    CpuEvent filled;
    CpuEvent copied;
    for (int step = 0; step < kSteps; ++step) {
      compute.wait(copied);
      compute.enqueue([&device, step] {
        for (int j = 0; j < kWords; ++j) device[j] = step * 1000 + j;
      });
      filled.record(compute);
      offload.wait(filled);
      offload.copy_async(host[step].data(), device.data(), sizeof(device));
      copied.record(offload);
    }
    offload.synchronize();
    compute.synchronize();
    for (int step = 0; step < kSteps; ++step) {
      for (int j = 0; j < kWords; ++j) {
        ASSERT_EQ(host[step][j], step * 1000 + j) << "seed " << seed << " step " << step;
      }
    }
  }
}

// An event recorded on `first` and awaited by `consumer` (which then sets consumer_ran), then
// recorded again on `second`: that moves the event, not the wait already enqueued. Both records
// stay pending until the test opens their gate.
struct RerecordedEvent {
  RerecordedEvent() {
    first.enqueue(first_gate.blocker());
    event.record(first);
    consumer.wait(event);
    consumer.enqueue(consumer_ran.setter());
    second.enqueue(second_gate.blocker());
    event.record(second);
  }

  Flag consumer_ran;
  CpuStream first{"offload"};
  CpuStream second{"prefetch"};
  CpuStream consumer{"compute"};
  CpuEvent event;
  Gate first_gate;
  Gate second_gate;
};

TEST(CpuEvent, WaitCapturesTheRecordAtCallTime) {
  RerecordedEvent s;
  s.first_gate.open();
  EXPECT_TRUE(s.consumer_ran.ready_within(kHangGuard));
  EXPECT_FALSE(s.event.query());
  s.second_gate.open();
  s.event.synchronize();
  EXPECT_TRUE(s.event.query());
}

TEST(CpuEvent, WaitIgnoresALaterRecordThatCompletesFirst) {
  RerecordedEvent s;
  s.second_gate.open();
  s.event.synchronize();  // the latest record is complete, the awaited one is not
  EXPECT_TRUE(s.event.query());
  EXPECT_FALSE(s.consumer_ran.ready_within(kNotYet));
  s.first_gate.open();
  s.consumer.synchronize();
  EXPECT_TRUE(s.consumer_ran.is_set());
}

TEST(CpuEvent, MayBeDestroyedWhileItsRecordIsPendingAndAwaited) {
  Flag consumer_ran;
  CpuStream producer("prefetch");
  CpuStream consumer("compute");
  Gate gate;
  producer.enqueue(gate.blocker());
  {
    CpuEvent event;
    event.record(producer);
    consumer.wait(event);
  }
  consumer.enqueue(consumer_ran.setter());
  EXPECT_FALSE(consumer_ran.ready_within(kNotYet));
  gate.open();
  consumer.synchronize();
  EXPECT_TRUE(consumer_ran.is_set());
}

TEST(CpuEvent, RecordOnANonCpuStreamThrows) {
  FakeStream stream;
  CpuEvent event;
  EXPECT_THROW(event.record(stream), InvalidArgument);
  EXPECT_TRUE(event.query());
}

}  // namespace
}  // namespace vdnn::runtime::cpu
