// printable: bytes from a data file made safe to quote in an error message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vdnn::models {

/// At most `max_bytes` of `text` (then "..."), control bytes shown as '?'.
inline std::string printable(std::string_view text, std::size_t max_bytes = 200) {
  std::string out(text.substr(0, max_bytes));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return text.size() > max_bytes ? out + "..." : out;
}

}  // namespace vdnn::models
