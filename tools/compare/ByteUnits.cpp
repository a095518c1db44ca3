// Byte counts in binary units, as the report prints them.
#include "tools/compare/ByteUnits.hpp"

#include <array>

#include "tools/compare/Svg.hpp"

namespace vdnn::tools {

ByteUnit byte_unit_for(double bytes) {
  static constexpr std::array<const char*, 5> kNames = {"B", "KiB", "MiB", "GiB", "TiB"};
  ByteUnit unit;
  for (std::size_t i = 1; i < kNames.size() && bytes >= unit.bytes * 1024.0; ++i) {
    unit = ByteUnit{kNames[i], unit.bytes * 1024.0};
  }
  return unit;
}

std::string format_bytes(std::uint64_t bytes) {
  const auto value = static_cast<double>(bytes);
  return format_bytes_in(value, byte_unit_for(value));
}

std::string format_bytes_in(double bytes, const ByteUnit& unit) {
  return format_number(bytes / unit.bytes, 2) + " " + unit.name;
}

}  // namespace vdnn::tools
