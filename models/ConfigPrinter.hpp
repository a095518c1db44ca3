// The text of a generated network config, laid out as the shipped configs are: one layer a line,
// one template layer a line, and the network's parameter count closing its description.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace vdnn::models {

/// `config` (a network config object, members in the order given) as text: each member on its
/// own line; "layers" and each of "templates" one element a line; values inline with a space after
/// each ':' and ','. Ends with a newline. Throws nothing beyond std::bad_alloc. Thread-safe.
std::string format_config(const nlohmann::ordered_json& config);

/// format_config of `config` once its "description" (a string) ends with "; N parameters.", N the
/// trainable parameters of the network it builds (so the count cannot drift from the layers).
/// Throws ConfigError or graph::GraphError if the config does not build (a generator's bug).
std::string format_config_with_count(nlohmann::ordered_json config);

}  // namespace vdnn::models
