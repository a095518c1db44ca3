// Strict JSON parsing for configs: standard JSON only (no comments) and no duplicate keys.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace vdnn::models::config {

using Json = nlohmann::json;

/// Parses `text`. Throws ConfigError naming `source` and the line and column of a syntax error,
/// or the JSON Pointer of an object that repeats a key.
Json parse_json(const std::string& text, const std::string& source);

/// JSON Pointer reference token for `key` ("~" and "/" escaped as RFC 6901 says).
std::string pointer_token(const std::string& key);

}  // namespace vdnn::models::config
