// builtin_data_source: a built-in source (models::make_dataset) behind the public DataSource,
// opened at its first batch, when the run's format is known.
#include <vdnn/DataSource.hpp>
#include <vdnn/Error.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "models/api/PublicErrors.hpp"
#include "models/data/Augmentation.hpp"
#include "models/data/Dataset.hpp"
#include "models/data/image/ImageSource.hpp"

namespace vdnn {
namespace {

bool is_builtin(const std::string& data) {
  const std::string cifar = "cifar10:";
  return data == "synthetic" || (data.rfind(cifar, 0) == 0 && data.size() > cifar.size()) ||
         models::is_image_source(data);
}

class BuiltinDataSource final : public DataSource {
 public:
  BuiltinDataSource(std::string data, const BuiltinSourceOptions& options)
      : data_(std::move(data)),
        options_(options),
        augment_(options.augment.empty() ? models::default_augment(data_)
                                         : models::parse_augment(options.augment)),
        images_(models::is_image_source(data_)) {}

  ElementType element_type() const override { return images_ ? ElementType::U8 : ElementType::F32; }

  void next_batch(const BatchFormat& format, void* images, std::int32_t* labels) override {
    api::translate_errors([&] {
      open(format);
      dataset_->next_batch(format.size, images, labels);
    });
  }

  bool seek(std::int64_t sample) override {
    api::translate_errors([&] {
      if (dataset_ != nullptr) {
        dataset_->seek(sample);
      } else {
        pending_seek_ = sample;
      }
    });
    return true;
  }

  std::int64_t size() const override { return dataset_ != nullptr ? dataset_->size() : 0; }

  std::string description() const override {
    return dataset_ != nullptr ? dataset_->description() : "built-in source " + data_;
  }

 private:
  // The dataset for `format` on the first call; later calls must ask for the same format.
  void open(const BatchFormat& format) {
    const models::SampleFormat sample{format.channels, format.height, format.width,
                                      format.num_classes};
    if (dataset_ != nullptr) {
      if (format.size != batch_ || sample.channels != format_.channels ||
          sample.height != format_.height || sample.width != format_.width ||
          sample.num_classes != format_.num_classes) {
        throw InvalidArgument("built-in source " + data_ +
                              ": a batch in another format than its first one");
      }
      return;
    }
    models::ImageOptions image;
    image.skip_bad = options_.skip_bad_images;
    image.workers = options_.data_workers;
    dataset_ = models::make_dataset(data_, sample, options_.seed, models::Split::Train, augment_,
                                    image, format.size);
    format_ = sample;
    batch_ = format.size;
    if (pending_seek_) dataset_->seek(*pending_seek_);
  }

  std::string data_;
  BuiltinSourceOptions options_;
  models::Augment augment_;
  bool images_;
  std::unique_ptr<models::Dataset> dataset_;
  models::SampleFormat format_;
  std::int64_t batch_ = 0;
  std::optional<std::int64_t> pending_seek_;
};

}  // namespace

std::shared_ptr<DataSource> builtin_data_source(const std::string& data,
                                                const BuiltinSourceOptions& options) {
  if (!is_builtin(data)) {
    throw InvalidArgument("builtin_data_source: '" + data +
                          "' is no built-in source; expected 'synthetic', 'cifar10:DIR', "
                          "'imagefolder:DIR' or 'webdataset:PATTERN'");
  }
  return api::translate_errors([&] { return std::make_shared<BuiltinDataSource>(data, options); });
}

}  // namespace vdnn
