// The image pipeline on the CPU: per sample, read the file, read its header, draw the crop, decode
// only the crop at the smallest DCT scale that covers the output, resample it to the output size.
#include "models/data/ImageDataset.hpp"

#include <chrono>
#include <future>

#include "models/data/EpochOrder.hpp"
#include "models/data/image/ClassIndex.hpp"
#include "models/data/image/ImageDecoder.hpp"
#include "models/data/image/ResizedCrop.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

using Clock = std::chrono::steady_clock;

const DecodeLimits kLimits;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::int64_t checked_side(const SampleFormat& format) {
  if (format.channels != 3 || format.height != format.width || format.height <= 0) {
    throw runtime::InvalidArgument(
        "image files need a network with a square 3-channel input; this one takes " +
        std::to_string(format.channels) + "x" + std::to_string(format.height) + "x" +
        std::to_string(format.width));
  }
  return format.height;
}

}  // namespace

ImageDataset::ImageDataset(std::unique_ptr<ImageSource> source, const SampleFormat& format,
                           Split split, std::uint64_t seed, Augment augment, std::size_t workers,
                           bool skip_bad, std::unique_ptr<GpuImageStage> gpu, double gpu_share)
    : source_(std::move(source)),
      side_(checked_side(format)),
      train_(split == Split::Train),
      random_crops_(train_ && augment == Augment::ImageNet),
      seed_(seed),
      order_(static_cast<std::size_t>(source_->size())),
      scratch_(workers),
      skip_bad_(skip_bad),
      gpu_(std::move(gpu)),
      gpu_share_(gpu_share),
      pool_(workers) {
  VDNN_EXPECTS(gpu_share > 0.0 && gpu_share <= 1.0,
               "the GPU's share of a batch is in (0, 1], got " + std::to_string(gpu_share));
  VDNN_EXPECTS(augment != Augment::CropFlip,
               "image files take the imagenet augmentation or none, not crop-flip");
  check_num_classes(source_->classes(), format.num_classes, source_->description());
  shuffle(0);
}

void ImageDataset::shuffle(std::uint64_t epoch) {
  epoch_ = epoch;
  epoch_order(seed_, epoch_, train_, order_);
}

void ImageDataset::seek(std::int64_t sample) {
  VDNN_EXPECTS(sample >= 0, "a sample number is never negative, got " + std::to_string(sample));
  const auto epoch = static_cast<std::uint64_t>(sample / size());
  if (epoch != epoch_) shuffle(epoch);
  cursor_ = sample % size();
}

void ImageDataset::next_batch(std::int64_t batch, void* images, std::int32_t* labels) {
  VDNN_EXPECTS(flights_.empty(), "next_batch() while batches are started: finish them first");
  start_batch(batch, images, labels);
  finish_batch();
}

void ImageDataset::start_batch(std::int64_t batch, void* images, std::int32_t* labels) {
  Flight& flight = flights_.emplace_back();
  flight.jobs.resize(static_cast<std::size_t>(batch));
  for (Job& job : flight.jobs) {
    if (cursor_ == size()) {
      shuffle(epoch_ + 1);
      cursor_ = 0;
    }
    job = {order_[static_cast<std::size_t>(cursor_)], epoch_, static_cast<std::uint64_t>(cursor_)};
    ++cursor_;
  }
  flight.out = static_cast<std::uint8_t*>(images);
  flight.labels = labels;
  if (gpu_ != nullptr) return;  // the GPU's batch goes in parts (finish_batch)
  // References into a deque survive pushes at its end, and the flight leaves only after its wait.
  try {
    flight.ticket = pool_.submit(batch, [this, &flight](std::size_t worker, std::int64_t i) {
      flight.labels[i] = produce(scratch_[worker], flight.jobs[static_cast<std::size_t>(i)],
                                 flight.out + i * sample_bytes());
    });
  } catch (...) {
    flights_.pop_back();  // never started: finish_batch() must not wait for it
    throw;
  }
}

void ImageDataset::finish_batch() {
  VDNN_EXPECTS(!flights_.empty(), "finish_batch() without a started batch");
  const Flight& flight = flights_.front();
  try {
    if (gpu_ != nullptr) {
      next_batch_on_gpu(flight);
    } else {
      pool_.wait(flight.ticket);
    }
  } catch (...) {
    flights_.pop_front();  // a batch that threw is finished too
    throw;
  }
  flights_.pop_front();
}

void ImageDataset::next_batch_on_gpu(const Flight& flight) {
  const std::vector<Job>& jobs = flight.jobs;
  const std::size_t batch = jobs.size();
  slot_bytes_.resize(batch);
  gpu_samples_.resize(batch);
  on_gpu_.assign(batch, 0);
  pool_.run(static_cast<std::int64_t>(batch), [&](std::size_t worker, std::int64_t i) {
    const auto slot = static_cast<std::size_t>(i);
    if (gpu_slot(slot, gpu_share_) && defer_to_gpu(scratch_[worker], slot, jobs[slot])) {
      flight.labels[slot] = source_->label(jobs[slot].sample);
    }
  });
  std::vector<GpuSample> queued;
  std::vector<std::size_t> on_cpu;
  for (std::size_t slot = 0; slot < batch; ++slot) {
    if (on_gpu_[slot] != 0) {
      queued.push_back(gpu_samples_[slot]);
    } else {
      on_cpu.push_back(slot);
    }
  }
  // The GPU decodes its files while the workers make the others (the future's destructor waits
  // for the GPU should the workers throw).
  std::future<std::vector<std::size_t>> failed =
      std::async(std::launch::async, [&] { return gpu_->run(queued, flight.out, sample_bytes()); });
  produce_slots(flight, on_cpu);
  produce_slots(flight, failed.get());
}

void ImageDataset::produce_slots(const Flight& flight, const std::vector<std::size_t>& slots) {
  pool_.run(static_cast<std::int64_t>(slots.size()), [&](std::size_t worker, std::int64_t i) {
    const std::size_t slot = slots[static_cast<std::size_t>(i)];
    flight.labels[slot] = produce(scratch_[worker], flight.jobs[slot],
                                  flight.out + static_cast<std::int64_t>(slot) * sample_bytes());
  });
}

bool ImageDataset::defer_to_gpu(Scratch& scratch, std::size_t slot, const Job& job) {
  if (known_bad(job.sample)) return false;
  std::vector<std::uint8_t>& bytes = slot_bytes_[slot];
  try {
    const auto start = Clock::now();
    source_->read(job.sample, kLimits.max_file_bytes, bytes);
    scratch.seconds.read += seconds_since(start);
    const ImageInfo info =
        read_image_info(bytes.data(), bytes.size(), source_->name(job.sample), kLimits);
    // Colour conversions other than YCbCr's (Adobe RGB and CMYK JPEGs) are PIL's, on the CPU.
    const bool plain = info.format == ImageFormat::Jpeg &&
                       (info.colour == ImageColour::YCbCr || info.colour == ImageColour::Gray);
    if (!plain || !gpu_->accepts(slot, bytes.data(), bytes.size(), info.width, info.height)) {
      return false;
    }
    gpu_samples_[slot] = {slot, bytes.data(), bytes.size(),
                          gpu_resize(job, info.width, info.height)};
  } catch (const runtime::DataError&) {
    return false;  // the CPU path names the file, or skips it
  }
  on_gpu_[slot] = 1;
  return true;
}

// The whole image decoded, then PIL's resize of the crop: torchvision's transform exactly.
ResizeSpec ImageDataset::gpu_resize(const Job& job, std::int64_t width, std::int64_t height) const {
  if (!random_crops_)
    return centre_crop_spec(width, height, eval_resize_crop(width, height, side_));
  const PixelBox box = draw_random_resized_crop(seed_, job.epoch, job.position, width, height);
  const SourceBox crop{static_cast<double>(box.left), static_cast<double>(box.top),
                       static_cast<double>(box.left + box.width),
                       static_cast<double>(box.top + box.height)};
  return resized_crop_spec(width, height, crop, side_, draw_flip(seed_, job.epoch, job.position));
}

std::int32_t ImageDataset::produce(Scratch& scratch, const Job& job, std::uint8_t* out) {
  for (std::int64_t tried = 0; tried < size(); ++tried) {
    const std::int64_t sample = (job.sample + tried) % size();
    if (known_bad(sample)) continue;
    try {
      read_and_transform(scratch, job, sample, out);
      return source_->label(sample);
    } catch (const runtime::DataError& e) {
      if (!skip_bad_) throw;
      note_bad(sample, e.what());
    }
  }
  throw runtime::DataError(source_->description() + ": no file can be read (--skip-bad-images " +
                           "skipped every one)");
}

void ImageDataset::read_and_transform(Scratch& scratch, const Job& job, std::int64_t sample,
                                      std::uint8_t* out) const {
  const auto start = Clock::now();
  source_->read(sample, kLimits.max_file_bytes, scratch.bytes);
  scratch.seconds.read += seconds_since(start);
  transform(scratch, job, source_->name(sample), out);
}

bool ImageDataset::known_bad(std::int64_t sample) const {
  if (!skip_bad_) return false;
  const std::lock_guard<std::mutex> lock(bad_mutex_);
  return bad_.count(sample) != 0;
}

void ImageDataset::note_bad(std::int64_t sample, const std::string& why) {
  const std::lock_guard<std::mutex> lock(bad_mutex_);
  bad_.emplace(sample, why);
}

std::vector<std::string> ImageDataset::bad_images() const {
  std::vector<std::string> all = source_->skipped();
  const std::lock_guard<std::mutex> lock(bad_mutex_);
  for (const auto& [sample, why] : bad_) all.push_back(why);
  return all;
}

// Decodes the crop the sample draws (or the whole image for the eval transform) and resizes it.
void ImageDataset::transform(Scratch& scratch, const Job& job, const std::string& name,
                             std::uint8_t* out) const {
  const auto start = Clock::now();
  const std::uint8_t* data = scratch.bytes.data();
  const std::size_t size = scratch.bytes.size();
  const ImageInfo info = read_image_info(data, size, name, kLimits);
  if (random_crops_) {
    const PixelBox box =
        draw_random_resized_crop(seed_, job.epoch, job.position, info.width, info.height);
    const DecodedRegion region = decode_region(data, size, name, box, side_, side_, kLimits);
    const auto decoded = Clock::now();
    scratch.seconds.decode += seconds_since(start);
    scratch.resampler.resized_crop(
        region.image,
        {region.left, region.top, region.left + region.width, region.top + region.height}, side_,
        draw_flip(seed_, job.epoch, job.position), out);
    scratch.seconds.resize += seconds_since(decoded);
    return;
  }
  const EvalGeometry geometry = eval_resize_crop(info.width, info.height, side_);
  const DecodedRegion whole =
      decode_region(data, size, name, {0, 0, info.height, info.width}, geometry.resized_width,
                    geometry.resized_height, kLimits);
  const auto decoded = Clock::now();
  scratch.seconds.decode += seconds_since(start);
  scratch.resampler.resize_centre_crop(whole.image, geometry, out);
  scratch.seconds.resize += seconds_since(decoded);
}

ImageStageSeconds ImageDataset::stage_seconds() const noexcept {
  ImageStageSeconds total;
  for (const Scratch& s : scratch_) {
    total.read += s.seconds.read;
    total.decode += s.seconds.decode;
    total.resize += s.seconds.resize;
  }
  return total;
}

std::string ImageDataset::description() const {
  return source_->description() + (random_crops_ ? ", imagenet augmentation" : "") +
         (gpu_ != nullptr ? ", decoded by " + gpu_->description() + " and the CPU" : "");
}

}  // namespace vdnn::models
