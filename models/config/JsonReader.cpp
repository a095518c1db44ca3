// Strict JSON parsing: nlohmann's parser with a callback that tracks the JSON Pointer of the value
// being parsed, so that a repeated key (which nlohmann would silently overwrite) is an error, and
// that stops a nesting bomb at kMaxJsonDepth (nlohmann's parser itself does not recurse).
#include "models/config/JsonReader.hpp"

#include <set>
#include <vector>

#include "models/ConfigError.hpp"

namespace vdnn::models::config {
namespace {

// One open object or array of the parse in progress.
struct Frame {
  bool is_object = false;
  std::set<std::string> keys;  // objects: keys seen so far
  std::string key;             // objects: key of the member being parsed
  std::size_t next_index = 0;  // arrays: index of the next element
};

// Pointer of the value being parsed: the current key or index of every open container.
std::string pointer_of(const std::vector<Frame>& frames) {
  std::string pointer;
  for (const Frame& f : frames) {
    pointer += '/';
    pointer += f.is_object ? pointer_token(f.key) : std::to_string(f.next_index - 1);
  }
  return pointer;
}

}  // namespace

std::string pointer_token(const std::string& key) {
  std::string token;
  for (const char c : key) {
    if (c == '~') {
      token += "~0";
    } else if (c == '/') {
      token += "~1";
    } else {
      token += c;
    }
  }
  return token;
}

Json parse_json(const std::string& text, const std::string& source) {
  std::vector<Frame> frames;
  // An element of an array advances the array's index when it starts.
  const auto start_value = [&frames] {
    if (!frames.empty() && !frames.back().is_object) ++frames.back().next_index;
  };
  const Json::parser_callback_t track = [&](int /*depth*/, Json::parse_event_t event,
                                            Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        start_value();
        if (frames.size() == kMaxJsonDepth) {
          throw ConfigError(
              source, pointer_of(frames),
              "objects and arrays nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
        }
        frames.push_back({event == Json::parse_event_t::object_start, {}, {}, 0});
        break;
      case Json::parse_event_t::key: {
        Frame& object = frames.back();
        object.key = parsed.get<std::string>();
        if (!object.keys.insert(object.key).second) {
          throw ConfigError(source, pointer_of(frames),
                            "duplicate key \"" + object.key + "\" (each key may appear once)");
        }
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        frames.pop_back();
        break;
      case Json::parse_event_t::value:
        start_value();
        break;
    }
    return true;
  };
  try {
    return Json::parse(text, track, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const Json::exception& e) {
    // parse_error, and out_of_range for a number beyond double ("1e999"). Drop nlohmann's
    // "[json.exception.parse_error.101] " prefix; keep "parse error at line L, column C: ...".
    std::string what = e.what();
    const std::size_t start = what.find("] ");
    throw ConfigError(
        source, "",
        "malformed JSON: " + (start == std::string::npos ? what : what.substr(start + 2)));
  }
}

}  // namespace vdnn::models::config
