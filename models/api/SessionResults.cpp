// The checked inference pass, softmax and memory of the public Trainer and Predictor.
#include "models/api/SessionResults.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/train/Predictor.hpp"

namespace vdnn::api {

std::vector<float> predict_floats(graph::Session& session, const float* images,
                                  std::int64_t count) {
  const graph::Graph& graph = session.graph();
  if (graph.image_input()) {
    throw runtime::InvalidArgument(
        "predict: this run's network takes image bytes (its data is image files), not floats");
  }
  if (images == nullptr || count < 1) {
    throw runtime::InvalidArgument("predict: needs images and a count of at least 1, got " +
                                   std::to_string(count));
  }
  std::vector<float> logits(static_cast<std::size_t>(count * graph.num_classes()));
  models::predict_logits(session, images, count, logits.data());
  return logits;
}

void softmax_rows(std::vector<float>& values, std::size_t classes) {
  for (std::size_t row = 0; row < values.size(); row += classes) {
    float* v = &values[row];
    const double top = *std::max_element(v, v + classes);
    double sum = 0.0;
    for (std::size_t i = 0; i < classes; ++i) sum += std::exp(static_cast<double>(v[i]) - top);
    for (std::size_t i = 0; i < classes; ++i) {
      v[i] = static_cast<float>(std::exp(static_cast<double>(v[i]) - top) / sum);
    }
  }
}

MemoryStats memory_stats(graph::Session& session) {
  const graph::MemoryReport m = session.executor().memory();
  return MemoryStats{m.device_capacity, m.device_peak, m.pinned_capacity, m.pinned_peak};
}

}  // namespace vdnn::api
