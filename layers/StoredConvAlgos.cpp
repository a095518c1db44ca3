// A convolution's algorithm choices as text, and the checks of a stored text, for the setup cache.
#include "layers/StoredConvAlgos.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

namespace vdnn::layers {
namespace {

constexpr const char* kHeader = "vdnn conv2d algorithms 1";

struct Direction {
  const char* name;
  std::vector<StoredAlgo> StoredConvAlgos::*list;
  int ConvAlgoLimits::*algos;
};
constexpr Direction kDirections[] = {
    {"forward", &StoredConvAlgos::forward, &ConvAlgoLimits::forward_algos},
    {"backward_data", &StoredConvAlgos::backward_data, &ConvAlgoLimits::backward_data_algos},
    {"backward_filter", &StoredConvAlgos::backward_filter, &ConvAlgoLimits::backward_filter_algos},
};

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

}  // namespace

std::string to_text(const StoredConvAlgos& algos) {
  std::string text = std::string(kHeader) + "\n";
  for (const Direction& d : kDirections) {
    const std::vector<StoredAlgo>& list = algos.*d.list;
    text += std::string(d.name) + " " + std::to_string(list.size()) + "\n";
    for (const StoredAlgo& a : list) {
      text += number_text(a.algo) + " " + number_text(a.math) + " " + number_text(a.workspace) +
              " " + number_text(a.seconds) + " " + number_text(a.chunks) + "\n";
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
      const std::vector<std::string> f = words(line);
      StoredAlgo a;
      if (f.size() != 5 || !read_number(f[0], a.algo) || !read_number(f[1], a.math) ||
          !read_number(f[2], a.workspace) || !read_number(f[3], a.seconds) ||
          !read_number(f[4], a.chunks)) {
        why = "bad candidate line \"" + line.substr(0, 60) + "\"" + where;
        return std::nullopt;
      }
      list.push_back(a);
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
      const std::string entry = " (algo " + std::to_string(a.algo) + where + ")";
      if (a.algo < 0 || a.algo >= limits.*d.algos) return "algorithm out of range" + entry;
      if (a.math < 0 || a.math >= limits.math_types) return "math type out of range" + entry;
      if (limits.only_math && a.math != *limits.only_math) return "math type not allowed" + entry;
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
