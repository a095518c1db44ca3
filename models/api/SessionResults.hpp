// SessionResults: what the public Trainer and Predictor read from their session alike: the logits
// and probabilities of float images, and the memory measured.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vdnn/Trainer.hpp>
#include <vector>

#include "graph/Session.hpp"

namespace vdnn::api {

/// The logits of `count` float images (NCHW, host memory) through `session`
/// (models::predict_logits): count x num_classes values. Throws runtime::InvalidArgument (a
/// network that takes image bytes, null images, a count below 1); the executor's errors.
std::vector<float> predict_floats(graph::Session& session, const float* images, std::int64_t count);

/// Each row of `classes` values replaced by its softmax, computed in double and shifted by the
/// row's largest value for range.
void softmax_rows(std::vector<float>& values, std::size_t classes);

/// The memory the session's executor measured, as the public API reports it. Throws nothing.
MemoryStats memory_stats(graph::Session& session);

}  // namespace vdnn::api
