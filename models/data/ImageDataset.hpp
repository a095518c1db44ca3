// ImageDataset: batches of image files (ImageFolder, WebDataset) decoded, cropped and resized on a
// pool of worker threads into u8 NHWC bytes (Note [Image pipeline]).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "models/data/Dataset.hpp"
#include "models/data/WorkerPool.hpp"
#include "models/data/image/GpuImageStage.hpp"
#include "models/data/image/ImageSource.hpp"
#include "models/data/image/Resample.hpp"

namespace vdnn::models {

/// Worker time per stage of the CPU pipeline, summed over workers and samples.
struct ImageStageSeconds {
  double read = 0.0;    // file or tar member bytes into memory
  double decode = 0.0;  // header, then the crop's pixels
  double resize = 0.0;  // crop, resize and flip to the output size
};

/// Serves an ImageSource as batch x size x size x 3 bytes (image_bytes()): the train split
/// reshuffled each epoch and, with Augment::ImageNet, torchvision's RandomResizedCrop and
/// horizontal flip; otherwise (and for the test split, in source order) torchvision's eval
/// transform, Resize(size * 256 / 224) then CenterCrop(size). Sample k of epoch e is a pure
/// function of (seed, e, k): the same on any number of workers, after any seek(). Not
/// thread-safe (one caller; the workers are its own).
class ImageDataset final : public Dataset {
 public:
  /// Throws runtime::InvalidArgument when `format` is not a square 3-channel input or its class
  /// count differs from the source's, or `augment` is CropFlip. With `gpu`, the JPEGs it accepts
  /// decode there (for batches up to the batch it was made for) and the rest on the workers: the
  /// GPU's decoder rounds differently from libjpeg-turbo's, so images differ from a CPU-only
  /// run's by a few levels, but each file always takes the same path. `gpu_share` in (0, 1] (else
  /// runtime::InvalidArgument) limits the GPU to the batch slots gpu_slot() picks: with 14 decode
  /// workers on the H200, the CPU makes ~6100 img/s alone, and the GPU's part of the batch holds
  /// up the enqueueing of the training step (Note [Image pipeline]).
  ImageDataset(std::unique_ptr<ImageSource> source, const SampleFormat& format, Split split,
               std::uint64_t seed, Augment augment, std::size_t workers, bool skip_bad = false,
               std::unique_ptr<GpuImageStage> gpu = nullptr, double gpu_share = 1.0);

  /// Throws runtime::DataError naming the file of the first sample (in batch order) that cannot
  /// be read or decoded; with skip_bad, such a sample is replaced by the next file of the source
  /// that can (in source order, so the batch stays a pure function of seed, epoch and position)
  /// and the file is counted in bad_images(); a DataError only when no file can be read.
  void next_batch(std::int64_t batch, void* images, std::int32_t* labels) override;
  /// Without a GPU stage the workers start on the batch at once, after the batches started
  /// before it (Note [Image pipeline]); with one, the batch is made in finish_batch().
  void start_batch(std::int64_t batch, void* images, std::int32_t* labels) override;
  void finish_batch() override;
  void seek(std::int64_t sample) override;
  std::int64_t size() const noexcept override { return source_->size(); }
  std::string description() const override;
  bool image_bytes() const noexcept override { return true; }
  std::vector<std::string> class_names() const override { return source_->classes(); }
  std::vector<std::string> bad_images() const override;

  const ImageSource& source() const noexcept { return *source_; }
  /// What the workers spent per stage since construction (call between batches).
  ImageStageSeconds stage_seconds() const noexcept;
  /// The GPU stage, if any (its description, counts and device memory).
  const GpuImageStage* gpu_stage() const noexcept { return gpu_.get(); }

 private:
  // One sample of a batch: which file, and the epoch and position its draws come from.
  struct Job {
    std::int64_t sample = 0;
    std::uint64_t epoch = 0;
    std::uint64_t position = 0;
  };
  // A batch started and not finished: its samples and where they go.
  struct Flight {
    std::vector<Job> jobs;
    std::uint8_t* out = nullptr;
    std::int32_t* labels = nullptr;
    WorkerPool::Ticket ticket = 0;  // without a GPU stage: the workers' loop making it
  };
  struct Scratch {
    std::vector<std::uint8_t> bytes;
    Resampler resampler;
    ImageStageSeconds seconds;
  };

  void shuffle(std::uint64_t epoch);
  // Writes the job's image (or, with skip_bad_, its replacement's) and returns the label.
  std::int32_t produce(Scratch& scratch, const Job& job, std::uint8_t* out);
  void read_and_transform(Scratch& scratch, const Job& job, std::int64_t sample,
                          std::uint8_t* out) const;
  // With a GPU stage: reads the job's file into its slot and, when the GPU takes it, queues it
  // there. False (the CPU then makes the sample) for anything else, unreadable files included.
  bool defer_to_gpu(Scratch& scratch, std::size_t slot, const Job& job);
  ResizeSpec gpu_resize(const Job& job, std::int64_t width, std::int64_t height) const;
  // With a GPU stage: the workers read every file and queue what the GPU takes; then the GPU
  // decodes those while the workers make the others, and the workers redo what the GPU failed.
  void next_batch_on_gpu(const Flight& flight);
  void produce_slots(const Flight& flight, const std::vector<std::size_t>& slots);
  std::int64_t sample_bytes() const noexcept { return side_ * side_ * 3; }
  bool known_bad(std::int64_t sample) const;
  void note_bad(std::int64_t sample, const std::string& why);
  void transform(Scratch& scratch, const Job& job, const std::string& name,
                 std::uint8_t* out) const;

  std::unique_ptr<ImageSource> source_;
  std::int64_t side_;
  bool train_;
  bool random_crops_;
  std::uint64_t seed_;
  std::vector<std::int64_t> order_;  // the current epoch's
  std::uint64_t epoch_ = 0;
  std::int64_t cursor_ = 0;
  std::deque<Flight> flights_;    // started batches, oldest first
  std::vector<Scratch> scratch_;  // one per worker
  bool skip_bad_;
  mutable std::mutex bad_mutex_;             // guards bad_
  std::map<std::int64_t, std::string> bad_;  // sample -> why, skipped at decode time
  std::unique_ptr<GpuImageStage> gpu_;
  double gpu_share_;                                   // with gpu_: gpu_slot's share
  std::vector<std::vector<std::uint8_t>> slot_bytes_;  // with gpu_: each slot's file
  std::vector<GpuSample> gpu_samples_;                 // with gpu_: per slot
  std::vector<char> on_gpu_;                           // with gpu_: whether the slot is queued
  WorkerPool pool_;                                    // last: its threads use the rest
};

}  // namespace vdnn::models
