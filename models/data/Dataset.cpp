// make_dataset: parses a --data source and checks it against the network's input format.
#include "models/data/Dataset.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <thread>

#include "models/data/Cifar10Dataset.hpp"
#include "models/data/ImageDataset.hpp"
#include "models/data/SyntheticDataset.hpp"
#include "models/data/image/GpuImageStage.hpp"
#include "models/data/image/ImageSource.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {

std::unique_ptr<Dataset> make_dataset(const std::string& source, const SampleFormat& format,
                                      std::uint64_t seed, Split split, Augment augment,
                                      const ImageOptions& image, std::int64_t batch) {
  if (split != Split::Train) augment = Augment::None;
  if (split == Split::Whole && !is_image_source(source)) split = Split::Test;
  if (source == "synthetic") {
    return std::make_unique<SyntheticDataset>(format, split, seed, augment);
  }
  const std::string cifar_prefix = "cifar10:";
  if (source.rfind(cifar_prefix, 0) == 0 && source.size() > cifar_prefix.size()) {
    if (format.channels != 3 || format.height != 32 || format.width != 32 ||
        format.num_classes != 10) {
      throw runtime::InvalidArgument(
          "cifar10 data needs a network with input 3x32x32 and 10 classes; this one takes " +
          std::to_string(format.channels) + "x" + std::to_string(format.height) + "x" +
          std::to_string(format.width) + " and " + std::to_string(format.num_classes) + " classes");
    }
    return std::make_unique<Cifar10Dataset>(source.substr(cifar_prefix.size()), split, seed,
                                            augment);
  }
  if (is_image_source(source)) {
    std::unique_ptr<GpuImageStage> gpu;
    if (image.decode == Decode::Gpu) gpu = make_gpu_image_stage(image.device, batch);
    return std::make_unique<ImageDataset>(
        open_image_source(source, split, image.skip_bad), format, split, seed, augment,
        image.workers > 0 ? image.workers : default_data_workers(), image.skip_bad, std::move(gpu),
        image.gpu_share);
  }
  throw runtime::InvalidArgument("unknown data source '" + source +
                                 "'; expected 'synthetic', 'cifar10:DIR', 'imagefolder:DIR' or "
                                 "'webdataset:PATTERN'");
}

namespace {
constexpr const char* kDecodeNames[] = {"auto", "cpu", "gpu"};
}  // namespace

const char* decode_name(Decode decode) noexcept {
  return kDecodeNames[static_cast<std::size_t>(decode)];
}

Decode parse_decode(const std::string& name) {
  for (std::size_t i = 0; i < std::size(kDecodeNames); ++i) {
    if (name == kDecodeNames[i]) return static_cast<Decode>(i);
  }
  throw runtime::InvalidArgument("unknown decode '" + name + "'; expected 'auto', 'cpu' or 'gpu'");
}

Decode resolve_decode(Decode decode, bool cuda, std::size_t workers) {
  if (decode == Decode::Auto) {
    const bool few_workers = workers < kWorkersForCpuDecode;
    return cuda && gpu_decode_built() && few_workers ? Decode::Gpu : Decode::Cpu;
  }
  if (decode == Decode::Gpu && !cuda) {
    throw runtime::InvalidArgument("--decode gpu needs the CUDA device (--device cuda)");
  }
  return decode;
}

void Dataset::start_batch(std::int64_t batch, void* images, std::int32_t* labels) {
  started_.push_back({batch, images, labels});
}

void Dataset::finish_batch() {
  VDNN_EXPECTS(!started_.empty(), "finish_batch() without a started batch");
  const Started next = started_.front();
  started_.pop_front();
  next_batch(next.batch, next.images, next.labels);
}

bool gpu_slot(std::size_t slot, double share) noexcept {
  const auto at = [share](std::size_t s) { return std::floor(static_cast<double>(s) * share); };
  return at(slot + 1) > at(slot);
}

std::size_t default_data_workers() noexcept {
  // Two cores stay with the thread that enqueues the steps and the driver's: a step enqueued
  // from a shared core took 1.6x as long (Note [Image pipeline]).
  const unsigned cores = std::thread::hardware_concurrency();
  return std::max<std::size_t>(1, cores > 2 ? cores - 2 : 1);
}

Augment default_augment(const std::string& source) noexcept {
  if (source == "synthetic") return Augment::None;
  return is_image_source(source) ? Augment::ImageNet : Augment::CropFlip;
}

std::uint64_t dataset_host_bytes(const std::string& source, const SampleFormat& format) noexcept {
  return source == "synthetic" ? SyntheticDataset::host_bytes(format) : 0;
}

}  // namespace vdnn::models
