// BatchLoader: a background thread draws the next batches from a dataset into a ring of staging
// buffers while the caller trains on one (Note [Data loading] in docs/ARCHITECTURE.md).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "models/data/Dataset.hpp"

namespace vdnn::models {

/// One batch in host memory, owned by the loader.
struct Batch {
  const void* images = nullptr;          // as Dataset::next_batch writes them
  const std::int32_t* labels = nullptr;  // batch class indices
};

/// Serves the batches of a dataset in its order, exactly as calling dataset.next_batch() would,
/// drawing batches k + 1 .. k + S - 1 on its own thread while the caller uses batch k, with S
/// buffers: each batch is started (Dataset::start_batch) as soon as its buffer is free, so a
/// dataset with workers makes several at once. The images go straight into the caller's buffers (on
/// CUDA the executor's pinned input staging, so the upload needs no further copy); labels into the
/// loader's own. Nothing is allocated after construction but the thread. Used from one thread (the
/// caller's) besides its own.
class BatchLoader {
 public:
  /// `images` are two or more distinct buffers of `batch` samples, owned by the caller, that
  /// outlive the loader. The dataset outlives it too; from the first next() until destruction
  /// only the loader draws from it (until then the caller may, e.g. to seek()).
  BatchLoader(Dataset& dataset, std::int64_t batch, std::vector<void*> images);
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;
  BatchLoader(BatchLoader&&) = delete;
  BatchLoader& operator=(BatchLoader&&) = delete;
  /// Stops the thread: it finishes the batches it started, if any, and is joined. Never throws.
  ~BatchLoader();

  /// The next batch; the batch the previous call returned goes back to the loader (the caller
  /// must be done with it). The first call starts the thread. Blocks until the batch is ready.
  /// Rethrows what the dataset threw while drawing this batch (same type and message), and again
  /// at every later call.
  Batch next();
  /// The batch the next call to next() returns, without handing it out: blocks until it is
  /// ready and rethrows as next() does. Its buffers stay as they are until the call to next()
  /// after that one, e.g. for Executor::stage_next (with three buffers or more the loader keeps
  /// drawing meanwhile; with two it waits for that next()).
  Batch peek();
  /// Images memory the loader leaves alone until the next call to next() (the buffer of the batch
  /// next() returned last, or either before the first call): scratch for the caller, e.g. to
  /// stage evaluation batches.
  void* idle_images() const noexcept;

 private:
  void run() noexcept;
  /// On the loader's thread: starts every batch whose buffer is free (dataset.start_batch), and
  /// returns true once batch `finished` is started and no buffer is free, false when told to stop.
  bool start_free_batches(std::int64_t& started, std::int64_t finished);
  /// Batch k once it is ready (starting the thread first if needed).
  Batch ready(std::int64_t k);

  Dataset& dataset_;
  const std::int64_t batch_;
  const std::vector<void*> images_;
  std::vector<std::vector<std::int32_t>> labels_;
  std::int64_t handed_ = 0;  // batches next() returned; the caller's thread only

  std::mutex mutex_;  // guards what follows; never held while a batch is drawn
  std::condition_variable slot_freed_;
  std::condition_variable batch_ready_;
  std::int64_t wanted_ = 0;    // the loader may draw batches 0 .. wanted_ (a slot each)
  std::int64_t produced_ = 0;  // batches 0 .. produced_ - 1 are ready
  std::exception_ptr error_;   // what stopped the loader, rethrown by next()
  bool stop_ = false;
  std::thread thread_;  // last: started after everything it uses exists
};

}  // namespace vdnn::models
