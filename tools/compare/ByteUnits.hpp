// ByteUnit: byte counts in human units (B, KiB, MiB, GiB, TiB) for report.html's tables and axes.
#pragma once

#include <cstdint>
#include <string>

namespace vdnn::tools {

/// A binary unit: its name and how many bytes it holds.
struct ByteUnit {
  const char* name = "B";
  double bytes = 1.0;
};

/// The largest unit in which `bytes` is at least 1 (B for 0).
ByteUnit byte_unit_for(double bytes);

/// `bytes` in its own unit with up to 2 decimals: "512 B", "1.5 KiB", "7.25 GiB".
std::string format_bytes(std::uint64_t bytes);

/// `bytes` expressed in `unit`: "3.5 GiB".
std::string format_bytes_in(double bytes, const ByteUnit& unit);

}  // namespace vdnn::tools
