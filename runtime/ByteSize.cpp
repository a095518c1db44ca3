// Parsing and printing of byte sizes for budgets, plans and reports.
#include "runtime/ByteSize.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::runtime {
namespace {

constexpr std::array<std::pair<const char*, double>, 10> kUnits = {{{"B", 1.0},
                                                                    {"KiB", 1024.0},
                                                                    {"MiB", 1048576.0},
                                                                    {"GiB", 1073741824.0},
                                                                    {"TiB", 1099511627776.0},
                                                                    {"KB", 1e3},
                                                                    {"MB", 1e6},
                                                                    {"GB", 1e9},
                                                                    {"TB", 1e12},
                                                                    {"", 1.0}}};

}  // namespace

std::uint64_t parse_bytes(const std::string& text) {
  std::size_t used = 0;
  double value = -1.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = used == 0 ? "?" : text.substr(used);
  for (const auto& [name, scale] : kUnits) {
    if (unit != name || !(value >= 0.0)) continue;
    const double bytes = std::floor(value * scale);
    if (bytes < 1.8e19) return static_cast<std::uint64_t>(bytes);
  }
  throw InvalidArgument("cannot read '" + text +
                        "' as a size; expected a number with an optional unit B, KiB, MiB, GiB, "
                        "TiB, KB, MB, GB or TB, e.g. 6GiB or 512MiB");
}

std::string format_bytes(std::uint64_t bytes) {
  const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char out[32];
  if (unit == 0) {
    std::snprintf(out, sizeof(out), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(out, sizeof(out), "%.2f %s", value, names[unit]);
  }
  return out;
}

std::string format_count(std::uint64_t count) {
  std::string digits = std::to_string(count);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) {
    digits.insert(static_cast<std::size_t>(i), ",");
  }
  return digits;
}

}  // namespace vdnn::runtime
