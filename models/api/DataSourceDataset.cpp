// The adapter from the public DataSource to the loader's Dataset.
#include "models/api/DataSourceDataset.hpp"

#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::api {

DataSourceDataset::DataSourceDataset(std::shared_ptr<DataSource> source,
                                     const models::SampleFormat& format)
    : source_(std::move(source)) {
  VDNN_EXPECTS(source_ != nullptr, "data_source is null");
  const ElementType type = source_->element_type();
  VDNN_EXPECTS(type == ElementType::F32 || type == ElementType::U8,
               "a DataSource's element_type() is F32 or U8 (image bytes)");
  format_.channels = format.channels;
  format_.height = format.height;
  format_.width = format.width;
  format_.num_classes = format.num_classes;
  format_.type = type;
  format_.layout = type == ElementType::U8 ? ImageLayout::NHWC : ImageLayout::NCHW;
  size_ = source_->size();
  description_ = source_->description();
}

void DataSourceDataset::next_batch(std::int64_t batch, void* images, std::int32_t* labels) {
  format_.size = batch;
  source_->next_batch(format_, images, labels);
}

void DataSourceDataset::seek(std::int64_t sample) {
  if (!source_->seek(sample)) {
    throw runtime::InvalidArgument(description_ + " cannot seek to sample " +
                                   std::to_string(sample) +
                                   " (DataSource::seek): resuming needs a source that can");
  }
}

}  // namespace vdnn::api
