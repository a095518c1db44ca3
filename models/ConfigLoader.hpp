// The strict JSON network format: named layers, reusable block templates with `repeat` and
// `$param` substitution. configs/schema/network.schema.json documents the format.
#pragma once

#include <cstddef>
#include <string>

#include "graph/NetworkDef.hpp"
#include "models/ConfigError.hpp"

namespace vdnn::models {

/// Reads and expands the network config at `path`. Repetition r of block B names its layers
/// "B.r.LOCAL", r unpadded as PyTorch's indices ("layer1.0.downsample.0"); top-level names have
/// no dots, so expanded names cannot collide. Every layer attribute a config leaves out keeps
/// its default from layers/LayerSpec.hpp. Each LayerDef::origin is "PATH at /json/pointer" so that
/// graph::Graph::build errors name the file and the place too. Throws ConfigError (unreadable
/// file, malformed JSON, unknown key or layer type, wrong value type or range, missing required
/// key, unknown template or parameter, an input that is not an earlier layer, wrong input count).
/// Shapes, tensor sizes and the loss layer are checked by Graph::build. Thread-safe.
graph::NetworkDef load_network(const std::string& path);

/// The text of the config file at `path`. Throws ConfigError when it cannot be read or is larger
/// than a config may be.
std::string read_config_file(const std::string& path);
/// As load_network, for config text already in memory; `source_name` stands for the file in
/// messages and origins.
graph::NetworkDef parse_network(const std::string& json_text, const std::string& source_name);

/// As parse_network, refusing networks that expand to more than `max_layers` layers (at most the
/// format's own limit of 2^20), e.g. to keep a fuzzer's inputs fast: 2^20 layers take seconds to
/// expand and plan.
graph::NetworkDef parse_network(const std::string& json_text, const std::string& source_name,
                                std::size_t max_layers);

}  // namespace vdnn::models
