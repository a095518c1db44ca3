// Strict JSON parsing for configs: standard JSON only (no comments) and no duplicate keys.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace vdnn::models::config {

using Json = nlohmann::json;

/// Deepest nesting of objects and arrays a config may have (the shipped configs need 6). Deeper
/// documents are refused while parsing: printing or copying a parsed value recurses once per
/// level, so a nesting bomb would overflow the stack.
inline constexpr std::size_t kMaxJsonDepth = 64;

/// Parses `text`. Throws ConfigError naming `source` and the line and column of a syntax error,
/// the JSON Pointer of an object that repeats a key, or of the first value nested deeper than
/// kMaxJsonDepth.
Json parse_json(const std::string& text, const std::string& source);

/// JSON Pointer reference token for `key` ("~" and "/" escaped as RFC 6901 says).
std::string pointer_token(const std::string& key);

}  // namespace vdnn::models::config
