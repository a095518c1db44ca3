// A convolution's engine choices as text, and the checks of a stored text, for the setup cache.
#include "layers/StoredConvAlgos.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

namespace vdnn::layers {
namespace {

constexpr const char* kHeader = "vdnn conv2d engines 2";

struct Direction {
  const char* name;
  std::vector<StoredAlgo> StoredConvAlgos::*list;
};
constexpr Direction kDirections[] = {
    {"forward", &StoredConvAlgos::forward},
    {"backward_data", &StoredConvAlgos::backward_data},
    {"backward_filter", &StoredConvAlgos::backward_filter},
};
// Engines take a handful of knobs; a line with more is not one this code wrote.
constexpr std::size_t kMaxKnobs = 64;

// A whole token as a number of type T; false when it is not one.
template <typename T>
bool read_number(const std::string& token, T& value) {
  const char* end = token.data() + token.size();
  const auto [ptr, error] = std::from_chars(token.data(), end, value);
  return error == std::errc() && ptr == end;
}

template <typename T>
std::string number_text(T value) {
  char text[64];
  const auto result = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, result.ptr);
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// "type:value" as a knob setting.
bool read_knob(const std::string& token, std::pair<std::int64_t, std::int64_t>& knob) {
  const std::size_t colon = token.find(':');
  return colon != std::string::npos && read_number(token.substr(0, colon), knob.first) &&
         read_number(token.substr(colon + 1), knob.second);
}

// One candidate line's fields: engine, workspace, seconds, chunks, the knob count and the knobs.
std::optional<StoredAlgo> parse_candidate(const std::vector<std::string>& f) {
  StoredAlgo a;
  std::size_t knobs = 0;
  if (f.size() < 5 || !read_number(f[0], a.engine) || !read_number(f[1], a.workspace) ||
      !read_number(f[2], a.seconds) || !read_number(f[3], a.chunks) || !read_number(f[4], knobs) ||
      knobs > kMaxKnobs || f.size() != 5 + knobs) {
    return std::nullopt;
  }
  a.knobs.resize(knobs);
  for (std::size_t k = 0; k < knobs; ++k) {
    if (!read_knob(f[5 + k], a.knobs[k])) return std::nullopt;
  }
  return a;
}

}  // namespace

std::string to_text(const StoredConvAlgos& algos) {
  std::string text = std::string(kHeader) + "\n";
  for (const Direction& d : kDirections) {
    const std::vector<StoredAlgo>& list = algos.*d.list;
    text += std::string(d.name) + " " + std::to_string(list.size()) + "\n";
    for (const StoredAlgo& a : list) {
      text += number_text(a.engine) + " " + number_text(a.workspace) + " " +
              number_text(a.seconds) + " " + number_text(a.chunks) + " " +
              number_text(a.knobs.size());
      for (const auto& [type, value] : a.knobs) {
        text += " " + number_text(type) + ":" + number_text(value);
      }
      text += "\n";
    }
  }
  return text;
}

std::optional<StoredConvAlgos> parse_conv_algos(const std::string& text, std::string& why) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) {
    why = "not a conv2d algorithm list (header \"" + line.substr(0, 40) + "\")";
    return std::nullopt;
  }
  StoredConvAlgos algos;
  for (const Direction& d : kDirections) {
    const std::string where = std::string(" (") + d.name + ")";
    if (!std::getline(in, line)) {
      why = "ends early" + where;
      return std::nullopt;
    }
    const std::vector<std::string> head = words(line);
    std::size_t count = 0;
    if (head.size() != 2 || head[0] != d.name || !read_number(head[1], count) || count > 4096) {
      why = "bad direction line \"" + line.substr(0, 40) + "\"" + where;
      return std::nullopt;
    }
    std::vector<StoredAlgo>& list = algos.*d.list;
    for (std::size_t i = 0; i < count; ++i) {
      if (!std::getline(in, line)) {
        why = "ends early" + where;
        return std::nullopt;
      }
      std::optional<StoredAlgo> a = parse_candidate(words(line));
      if (!a) {
        why = "bad candidate line \"" + line.substr(0, 60) + "\"" + where;
        return std::nullopt;
      }
      list.push_back(std::move(*a));
    }
  }
  if (std::getline(in, line)) {
    why = "text after the last direction";
    return std::nullopt;
  }
  return algos;
}

std::string check_conv_algos(const StoredConvAlgos& algos, const ConvAlgoLimits& limits) {
  for (const Direction& d : kDirections) {
    const std::vector<StoredAlgo>& list = algos.*d.list;
    const std::string where = std::string(" in ") + d.name;
    if (list.empty()) return std::string("no candidate") + where;
    for (const StoredAlgo& a : list) {
      const std::string entry = " (engine " + std::to_string(a.engine) + where + ")";
      if (a.engine < 0) return "engine out of range" + entry;
      for (const auto& knob : a.knobs) {
        if (knob.first < 0 || knob.first >= limits.knob_types) return "knob out of range" + entry;
      }
      if (std::find(limits.chunks.begin(), limits.chunks.end(), a.chunks) == limits.chunks.end()) {
        return "no problem of " + std::to_string(a.chunks) + " chunks" + entry;
      }
      if (a.workspace > std::numeric_limits<std::size_t>::max())
        return "workspace too large" + entry;
      if (!std::isfinite(a.seconds)) {
        return "seconds not a number" + entry;
      }
      if (limits.measured != (a.seconds >= 0.0)) {
        return std::string(limits.measured ? "not measured"
                                           : "measured, expected a heuristic rank") +
               entry;
      }
    }
  }
  return {};
}

}  // namespace vdnn::layers
