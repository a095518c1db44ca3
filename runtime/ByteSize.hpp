// Byte sizes as people write them: "512MiB", "6GiB", "1.5GB", "1048576".
#pragma once

#include <cstdint>
#include <string>

namespace vdnn::runtime {

/// Parses a non-negative size with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB; case
/// as written). Throws InvalidArgument naming the text and the accepted forms.
std::uint64_t parse_bytes(const std::string& text);

/// "1.50 GiB", "12.0 MiB", "512 B".
std::string format_bytes(std::uint64_t bytes);

/// A count with thousands separators: "61,100,840".
std::string format_count(std::uint64_t count);

}  // namespace vdnn::runtime
