// TrainerOptions: a public TrainerConfig checked and turned into the options of a run, for the
// Trainer and the Predictor alike (so that both set up the same session).
#pragma once

#include <string>
#include <vdnn/Trainer.hpp>

#include "graph/NetworkDef.hpp"
#include "models/train/Trainer.hpp"

namespace vdnn::api {

/// The run options of config `c` for network `def` (config_json recorded in its checkpoints).
/// Throws vdnn::InvalidArgument or runtime::InvalidArgument (translated by the caller) for a value
/// out of range or an unknown name.
models::TrainerOptions trainer_options(const TrainerConfig& c, const graph::NetworkDef& def,
                                       const std::string& config_json);

}  // namespace vdnn::api
