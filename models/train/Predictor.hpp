// Predictor: inference as a library type: a session planned for inference only (Note [Inference
// plan]) on a checkpoint's weights, and the batched forward pass that it and Trainer::predict
// share, so that both give the same logits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "graph/NetworkDef.hpp"
#include "graph/Session.hpp"
#include "models/train/SetupCache.hpp"

namespace vdnn::models {

/// The logits of `count` (>= 1) images in host memory, in the network input's form, into
/// `logits` (count x num_classes floats): in inference mode (Executor::evaluate), a batch at a
/// time, the last one padded with zeros (which changes no other image's logits). Changes no
/// training state. Throws runtime::InvalidArgument for null pointers or a count below 1; the
/// executor's errors.
void predict_logits(graph::Session& session, const void* images, std::int64_t count, float* logits);

/// Everything an inference run is set up from; the fields mean what TrainerOptions' do.
struct PredictorOptions {
  graph::SessionOptions session;  // its purpose is made Purpose::Inference
  std::filesystem::path cache_dir = runtime::default_cache_dir();
  bool cache = true;
};

/// Owns one inference run: a session of `batch` planned for inference (parameters and batch-norm
/// statistics, no gradients, optimizer state or backward) under the options' policy and budget.
/// Not thread-safe.
class Predictor {
 public:
  /// Builds the session and loads the parameters and batch-norm statistics of `checkpoint`
  /// (load_checkpoint weights-only, as Trainer::init_from). Throws graph::DoesNotFit (the forward
  /// pass does not fit the budget), runtime::OutOfMemory, runtime::InvalidArgument,
  /// runtime::CudaError, CheckpointError.
  Predictor(const graph::NetworkDef& def, std::int64_t batch, PredictorOptions options,
            const std::filesystem::path& checkpoint);
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;
  Predictor(Predictor&&) = delete;
  Predictor& operator=(Predictor&&) = delete;
  ~Predictor();

  /// predict_logits on this run's session. Throws as predict_logits.
  void predict(const void* images, std::int64_t count, float* logits);

  graph::Session& session() noexcept { return *session_; }
  const graph::Session& session() const noexcept { return *session_; }
  const PredictorOptions& options() const noexcept { return options_; }

 private:
  PredictorOptions options_;
  SetupCache cache_;  // before the session, which reads it
  std::unique_ptr<graph::Session> session_;
};

}  // namespace vdnn::models
