// BatchInput: a caller's vdnn::Batch checked against a run and brought into the form its network
// takes (F32 NCHW floats, or U8 NHWC image bytes).
#pragma once

#include <cstddef>
#include <vdnn/Batch.hpp>
#include <vector>

#include "graph/Graph.hpp"
#include "models/train/Trainer.hpp"

namespace vdnn::api {

/// Checks `batch` against the run of `trainer`: images and labels not null; size, channels, height
/// and width those of the network input; a type and layout the network takes (Batch's rules);
/// host batches not in device memory, on_device batches in memory of the run's CUDA device, with
/// a stream, in the input's form. Throws runtime::InvalidArgument naming what is wrong (`what`
/// starts the message, e.g. "step(batch)"); the context's CudaError.
void check_batch(const Batch& batch, models::Trainer& trainer, const char* what);

/// The images of a checked host batch in the network input's form: the caller's memory when it
/// is in that form already, else `scratch` (resized, then reused by later calls) holding them
/// converted (BF16 widened exactly to F32; NHWC and NCHW reordered).
const void* network_input(const Batch& batch, const graph::Graph& graph,
                          std::vector<std::byte>& scratch);

}  // namespace vdnn::api
