// The loader thread and its hand-over of two staging buffers (Note [Data loading]).
#include "models/data/BatchLoader.hpp"

#include "runtime/Error.hpp"

namespace vdnn::models {

BatchLoader::BatchLoader(Dataset& dataset, std::int64_t batch, std::array<float*, 2> images)
    : dataset_(dataset),
      batch_(batch),
      images_(images),
      labels_{std::vector<std::int32_t>(static_cast<std::size_t>(batch)),
              std::vector<std::int32_t>(static_cast<std::size_t>(batch))} {
  VDNN_EXPECTS(batch > 0 && images[0] != nullptr && images[1] != nullptr && images[0] != images[1],
               "a batch loader needs a positive batch and two distinct image buffers");
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
    wanted_ = k + 1;  // batch k - 1 is back: its slot may take batch k + 1
  }
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { run(); });
  } else {
    slot_freed_.notify_one();
  }
  std::unique_lock lock(mutex_);
  batch_ready_.wait(lock, [&] { return produced_ > k || error_ != nullptr; });
  if (produced_ <= k) std::rethrow_exception(error_);
  ++handed_;
  const auto slot = static_cast<std::size_t>(k % 2);
  return {images_[slot], labels_[slot].data()};
}

float* BatchLoader::idle_images() const noexcept {
  return images_[static_cast<std::size_t>((handed_ + 1) % 2)];
}

void BatchLoader::run() noexcept {
  for (std::int64_t k = 0;; ++k) {
    {
      std::unique_lock lock(mutex_);
      slot_freed_.wait(lock, [&] { return stop_ || k <= wanted_; });
      if (stop_) return;
    }
    const auto slot = static_cast<std::size_t>(k % 2);
    try {
      dataset_.next_batch(batch_, images_[slot], labels_[slot].data());
    } catch (...) {
      {
        const std::lock_guard lock(mutex_);
        error_ = std::current_exception();
      }
      batch_ready_.notify_one();
      return;
    }
    {
      const std::lock_guard lock(mutex_);
      produced_ = k + 1;
    }
    batch_ready_.notify_one();
  }
}

}  // namespace vdnn::models
