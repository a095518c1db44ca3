// The batched inference pass, and the inference-only run of a checkpoint (Note [Inference plan]).
#include "models/train/Predictor.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "models/train/Checkpoint.hpp"

namespace vdnn::models {

void predict_logits(graph::Session& session, const void* images, std::int64_t count,
                    float* logits) {
  VDNN_EXPECTS(images != nullptr && logits != nullptr && count >= 1,
               "predict: needs images, somewhere for the logits and a count of at least 1");
  const graph::Graph& graph = session.graph();
  const std::int64_t batch = graph.batch();
  const auto classes = static_cast<std::size_t>(graph.num_classes());
  const std::size_t sample_bytes =
      graph.tensor_bytes(graph::kNetworkInput) / static_cast<std::size_t>(batch);
  const std::vector<std::int32_t> labels(static_cast<std::size_t>(batch), 0);  // unused
  std::vector<std::byte> padded;
  std::vector<float> padded_logits;
  const auto* in = static_cast<const std::byte*>(images);
  for (std::int64_t first = 0; first < count; first += batch) {
    const auto n = static_cast<std::size_t>(std::min(batch, count - first));
    const std::byte* chunk = in + static_cast<std::size_t>(first) * sample_bytes;
    float* out = logits + static_cast<std::size_t>(first) * classes;
    if (n == static_cast<std::size_t>(batch)) {
      session.executor().evaluate(chunk, labels.data(), out);
      continue;
    }
    padded.assign(static_cast<std::size_t>(batch) * sample_bytes, std::byte{0});
    std::copy_n(chunk, n * sample_bytes, padded.begin());
    padded_logits.resize(static_cast<std::size_t>(batch) * classes);
    session.executor().evaluate(padded.data(), labels.data(), padded_logits.data());
    std::copy_n(padded_logits.begin(), n * classes, out);
  }
}

namespace {

PredictorOptions for_inference(PredictorOptions options) {
  options.session.purpose = graph::Purpose::Inference;
  return options;
}

}  // namespace

Predictor::Predictor(const graph::NetworkDef& def, std::int64_t batch, PredictorOptions options,
                     const std::filesystem::path& checkpoint)
    : options_(for_inference(std::move(options))),
      cache_(open_setup_cache(options_.cache_dir, options_.cache, options_.session)),
      session_(
          std::make_unique<graph::Session>(graph::Graph::build(def, batch), options_.session)) {
  LoadOptions load;
  load.weights_only = true;
  load_checkpoint(checkpoint, *session_, load);
}

Predictor::~Predictor() = default;

void Predictor::predict(const void* images, std::int64_t count, float* logits) {
  predict_logits(*session_, images, count, logits);
}

}  // namespace vdnn::models
