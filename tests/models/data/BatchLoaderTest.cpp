// BatchLoader: the same batches as drawing them directly, drawn ahead while the caller holds one
// (and peeks at the next), the dataset's exceptions rethrown with their type, clean destruction at
// any moment.
#include "models/data/BatchLoader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "models/data/CifarFiles.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

using namespace std::chrono_literals;

const SampleFormat kCifar{3, 32, 32, 10};

// `slots` image buffers of `batch` CIFAR samples.
struct Buffers {
  explicit Buffers(std::int64_t batch, std::size_t slots = 2)
      : images(slots, std::vector<float>(static_cast<std::size_t>(batch * 3072))) {}
  std::vector<void*> views() {
    std::vector<void*> v;
    for (std::vector<float>& i : images) v.push_back(i.data());
    return v;
  }
  std::vector<std::vector<float>> images;
};

TEST(BatchLoader, GivesExactlyTheDatasetsBatchesInOrder) {
  const auto dir = std::filesystem::temp_directory_path() / "vdnn-test-loader-cifar";
  std::filesystem::remove_all(dir);
  testing::write_cifar_directory(dir, 2, 9, 1);  // epochs of 18: batches cross them
  for (const std::string& source :
       std::vector<std::string>{"synthetic", "cifar10:" + dir.string()}) {
    for (const std::size_t slots : {2, 3}) {
      constexpr std::int64_t kBatch = 5;
      auto direct = make_dataset(source, kCifar, 4, Split::Train, Augment::CropFlip);
      auto loaded = make_dataset(source, kCifar, 4, Split::Train, Augment::CropFlip);
      Buffers buffers(kBatch, slots);
      BatchLoader loader(*loaded, kBatch, buffers.views());
      std::vector<float> images(kBatch * 3072);
      std::vector<std::int32_t> labels(kBatch);
      for (int k = 0; k < 25; ++k) {
        direct->next_batch(kBatch, images.data(), labels.data());
        const Batch peeked = loader.peek();
        const Batch batch = loader.next();
        const std::string where =
            source + ", " + std::to_string(slots) + " slots, batch " + std::to_string(k);
        ASSERT_TRUE(
            std::equal(images.begin(), images.end(), static_cast<const float*>(batch.images)))
            << where;
        ASSERT_TRUE(std::equal(labels.begin(), labels.end(), batch.labels)) << where;
        EXPECT_EQ(peeked.images, batch.images) << where;
        EXPECT_EQ(batch.images, buffers.views()[static_cast<std::size_t>(k) % slots]);
        EXPECT_EQ(loader.idle_images(), batch.images);  // the caller's until the next call
      }
    }
  }
}

// Counts the batches drawn; throws DataError at batch `fail_at`; each draw takes `delay`.
class ProbeDataset final : public Dataset {
 public:
  explicit ProbeDataset(int fail_at = -1, std::chrono::milliseconds delay = 0ms)
      : fail_at_(fail_at), delay_(delay) {}
  void next_batch(std::int64_t batch, void* images, std::int32_t* labels) override {
    std::this_thread::sleep_for(delay_);
    const int k = drawn_;
    if (k == fail_at_) throw runtime::DataError("probe: record " + std::to_string(k) + " is bad");
    for (std::int64_t i = 0; i < batch; ++i) {
      labels[i] = k;
      static_cast<float*>(images)[i * 3072] = static_cast<float>(k);
    }
    drawn_ = k + 1;
  }
  void seek(std::int64_t) override {}
  std::int64_t size() const noexcept override { return 0; }
  std::string description() const override { return "probe"; }
  int drawn() const { return drawn_; }

 private:
  int fail_at_;
  std::chrono::milliseconds delay_;
  std::atomic<int> drawn_{0};
};

// Polls `done` for up to 10 s (the loader thread's progress has no other signal).
template <typename Done>
bool eventually(Done done) {
  for (int i = 0; i < 1000 && !done(); ++i) std::this_thread::sleep_for(10ms);
  return done();
}

TEST(BatchLoader, DrawsTheNextBatchWhileTheCallerHoldsOneAndNoFurther) {
  ProbeDataset data;
  Buffers buffers(2);
  BatchLoader loader(data, 2, buffers.views());
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(data.drawn(), 0);  // the thread starts with the first next()
  EXPECT_EQ(loader.next().labels[0], 0);
  EXPECT_TRUE(eventually([&] { return data.drawn() == 2; }));  // batch 1 while 0 is held
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(data.drawn(), 2);  // both buffers are taken
  EXPECT_EQ(loader.next().labels[0], 1);
  EXPECT_TRUE(eventually([&] { return data.drawn() == 3; }));
  EXPECT_EQ(loader.next().labels[1], 2);
}

// Executor::stage_next's pattern: hold batch k, peek at k + 1, and the thread draws k + 2 into
// the third buffer, never the two in use.
TEST(BatchLoader, WithThreeBuffersDrawsAheadWhileTheCallerHoldsOneAndPeeksAtTheNext) {
  ProbeDataset data;
  Buffers buffers(2, 3);
  BatchLoader loader(data, 2, buffers.views());
  for (int k = 0; k < 4; ++k) {
    const Batch held = loader.next();
    const Batch next = loader.peek();
    EXPECT_EQ(held.labels[0], k);
    EXPECT_EQ(next.labels[0], k + 1);
    EXPECT_NE(held.images, next.images);
    EXPECT_TRUE(eventually([&] { return data.drawn() == k + 3; })) << k;
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(data.drawn(), k + 3) << k;  // every buffer is taken
    // Neither buffer was written again.
    EXPECT_EQ(static_cast<const float*>(held.images)[0], static_cast<float>(k));
    EXPECT_EQ(static_cast<const float*>(next.images)[0], static_cast<float>(k + 1));
  }
}

TEST(BatchLoader, RethrowsTheDatasetsErrorWithItsTypeAndMessageAtEveryLaterCall) {
  ProbeDataset data(/*fail_at=*/2);
  Buffers buffers(1);
  BatchLoader loader(data, 1, buffers.views());
  EXPECT_EQ(loader.next().labels[0], 0);
  EXPECT_EQ(loader.next().labels[0], 1);  // drawn before the failure
  EXPECT_THROW(loader.peek(), runtime::DataError);
  for (int i = 0; i < 2; ++i) {
    try {
      loader.next();
      FAIL() << "expected DataError";
    } catch (const runtime::DataError& e) {
      EXPECT_STREQ(e.what(), "probe: record 2 is bad");
    }
  }
}

TEST(BatchLoader, DestructionJoinsAtAnyMoment) {
  Buffers buffers(1);
  {
    ProbeDataset data;
    BatchLoader never_started(data, 1, buffers.views());
  }
  {
    ProbeDataset data(-1, 100ms);
    BatchLoader mid_draw(data, 1, buffers.views());
    mid_draw.next();  // batch 1 is being drawn: destruction waits for it
  }
  {
    ProbeDataset data;
    BatchLoader waiting(data, 1, buffers.views());
    waiting.next();
    EXPECT_TRUE(eventually([&] { return data.drawn() == 2; }));  // now blocked on a free buffer
  }
  {
    ProbeDataset data(/*fail_at=*/1);
    BatchLoader failed(data, 1, buffers.views());
    failed.next();
    EXPECT_THROW(failed.next(), runtime::DataError);
  }
}

// A dataset that makes its batches between start_batch and finish_batch, as ImageDataset's
// workers do: counts how many are started and not finished, and fails batch `fail_at`.
class InFlightDataset final : public Dataset {
 public:
  explicit InFlightDataset(int fail_at = -1) : fail_at_(fail_at) {}
  void next_batch(std::int64_t, void*, std::int32_t*) override { FAIL() << "drawn directly"; }
  void start_batch(std::int64_t batch, void* images, std::int32_t* labels) override {
    const std::lock_guard lock(mutex_);
    pending_.push_back({batch, images, labels});
    ++started_;
    most_in_flight_ = std::max(most_in_flight_.load(), started_ - finished_);
  }
  void finish_batch() override {
    Started s;
    {
      const std::lock_guard lock(mutex_);
      s = pending_.front();
      pending_.erase(pending_.begin());
    }
    const int k = finished_;
    ++finished_;
    if (k == fail_at_) throw runtime::DataError("in flight: batch " + std::to_string(k));
    for (std::int64_t i = 0; i < s.batch; ++i) s.labels[i] = k;
  }
  void seek(std::int64_t) override {}
  std::int64_t size() const noexcept override { return 0; }
  std::string description() const override { return "in flight"; }
  int started() const { return started_; }
  int finished() const { return finished_; }
  int most_in_flight() const { return most_in_flight_; }

 private:
  struct Started {
    std::int64_t batch = 0;
    void* images = nullptr;
    std::int32_t* labels = nullptr;
  };
  int fail_at_;
  std::mutex mutex_;
  std::vector<Started> pending_;
  std::atomic<int> started_{0};
  std::atomic<int> finished_{0};
  std::atomic<int> most_in_flight_{0};
};

// With S buffers the loader starts every batch whose buffer is free before it finishes the
// oldest, and its destruction finishes those it started (they write into the caller's buffers).
TEST(BatchLoader, StartsABatchPerFreeBufferAndFinishesThemAllBeforeItGoes) {
  Buffers buffers(2, 4);
  {
    InFlightDataset data;
    {
      BatchLoader loader(data, 2, buffers.views());
      for (int k = 0; k < 6; ++k) EXPECT_EQ(loader.next().labels[1], k);
      EXPECT_TRUE(eventually([&] { return data.started() == 9; }));  // 6 .. 8 while 5 is held
      std::this_thread::sleep_for(20ms);
      EXPECT_EQ(data.started(), 9);  // every other buffer is taken
    }
    EXPECT_EQ(data.most_in_flight(), 4);  // before the first next() returned: all were free
    EXPECT_EQ(data.finished(), data.started());
  }
  {
    InFlightDataset data(/*fail_at=*/2);
    {
      BatchLoader loader(data, 2, buffers.views());
      EXPECT_EQ(loader.next().labels[0], 0);
      EXPECT_EQ(loader.next().labels[0], 1);
      EXPECT_THROW(loader.next(), runtime::DataError);
    }
    EXPECT_EQ(data.finished(), data.started());  // batch 3, started before 2 failed, too
    EXPECT_GE(data.started(), 3);
  }
}

TEST(BatchLoader, RejectsBadArguments) {
  ProbeDataset data;
  std::vector<float> one(3072);
  EXPECT_THROW(BatchLoader(data, 1, {one.data(), one.data()}), runtime::InvalidArgument);
  EXPECT_THROW(BatchLoader(data, 0, {one.data(), one.data() + 1}), runtime::InvalidArgument);
  EXPECT_THROW(BatchLoader(data, 1, {one.data()}), runtime::InvalidArgument);
  EXPECT_THROW(BatchLoader(data, 1, {one.data(), nullptr}), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::models
