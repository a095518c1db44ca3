// DataSourceDataset: the caller's vdnn::DataSource as a models::Dataset, so that the batch loader,
// input staging and resume treat custom data as they treat the built-in sources.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vdnn/DataSource.hpp>

#include "models/data/Dataset.hpp"

namespace vdnn::api {

/// Draws `source`'s batches in the form its element_type() says (BatchFormat). Thread-safety as
/// Dataset's: the loader thread calls next_batch() and seek().
class DataSourceDataset final : public models::Dataset {
 public:
  /// Throws runtime::InvalidArgument for a null source or an element type other than F32 or U8.
  DataSourceDataset(std::shared_ptr<DataSource> source, const models::SampleFormat& format);

  void next_batch(std::int64_t batch, void* images, std::int32_t* labels) override;
  bool image_bytes() const noexcept override { return format_.type == ElementType::U8; }
  /// Throws runtime::InvalidArgument when the source cannot seek (DataSource::seek).
  void seek(std::int64_t sample) override;
  std::int64_t size() const noexcept override { return size_; }
  std::string description() const override { return description_; }

 private:
  std::shared_ptr<DataSource> source_;
  BatchFormat format_;
  std::int64_t size_ = 0;    // read once: size() is noexcept
  std::string description_;  // read once: any thread may ask
};

}  // namespace vdnn::api
