// The loader thread and its hand-over of a ring of staging buffers (Note [Data loading]).
#include "models/data/BatchLoader.hpp"

#include <algorithm>
#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::models {

namespace {

bool distinct_buffers(std::vector<void*> images) {
  std::sort(images.begin(), images.end());
  return images.size() >= 2 && images.front() != nullptr &&
         std::adjacent_find(images.begin(), images.end()) == images.end();
}

}  // namespace

BatchLoader::BatchLoader(Dataset& dataset, std::int64_t batch, std::vector<void*> images)
    : dataset_(dataset), batch_(batch), images_(std::move(images)) {
  VDNN_EXPECTS(batch > 0 && distinct_buffers(images_),
               "a batch loader needs a positive batch and two or more distinct image buffers");
  labels_.assign(images_.size(), std::vector<std::int32_t>(static_cast<std::size_t>(batch)));
}

BatchLoader::~BatchLoader() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  slot_freed_.notify_one();
  if (thread_.joinable()) thread_.join();
}

Batch BatchLoader::next() {
  const std::int64_t k = handed_;
  {
    const std::lock_guard lock(mutex_);
    // Batch k - 1 is back: its slot may take batch k + S - 1.
    wanted_ = k + static_cast<std::int64_t>(images_.size()) - 1;
  }
  slot_freed_.notify_one();
  const Batch batch = ready(k);
  ++handed_;
  return batch;
}

Batch BatchLoader::peek() { return ready(handed_); }

Batch BatchLoader::ready(std::int64_t k) {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  std::unique_lock lock(mutex_);
  batch_ready_.wait(lock, [&] { return produced_ > k || error_ != nullptr; });
  if (produced_ <= k) std::rethrow_exception(error_);
  const std::size_t slot = static_cast<std::size_t>(k) % images_.size();
  return {images_[slot], labels_[slot].data()};
}

void* BatchLoader::idle_images() const noexcept {
  return images_[(static_cast<std::size_t>(handed_) + images_.size() - 1) % images_.size()];
}

void BatchLoader::run() noexcept {
  std::int64_t started = 0;   // batches handed to the dataset
  std::int64_t finished = 0;  // batches it completed or failed
  try {
    while (start_free_batches(started, finished)) {
      ++finished;  // before the call: a batch that throws is finished too
      dataset_.finish_batch();
      {
        const std::lock_guard lock(mutex_);
        produced_ = finished;
      }
      batch_ready_.notify_one();
    }
  } catch (...) {
    {
      const std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    batch_ready_.notify_one();
  }
  // The buffers outlive the loader, but the dataset may still be writing into those it was
  // given: wait for them, whatever they throw.
  while (finished < started) {
    ++finished;
    try {
      dataset_.finish_batch();
    } catch (...) {  // NOLINT(bugprone-empty-catch): the loader has stopped or failed already
    }
  }
}

bool BatchLoader::start_free_batches(std::int64_t& started, std::int64_t finished) {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      slot_freed_.wait(lock, [&] { return stop_ || started <= wanted_ || started > finished; });
      if (stop_) return false;
      if (started > wanted_) return true;  // batch `finished` is started: finish it
    }
    const std::size_t slot = static_cast<std::size_t>(started) % images_.size();
    dataset_.start_batch(batch_, images_[slot], labels_[slot].data());
    ++started;
  }
}

}  // namespace vdnn::models
