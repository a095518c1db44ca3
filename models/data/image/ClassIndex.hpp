// ClassIndex: the class-to-label mapping of an image source, kept as `classes.txt` in the run
// folder (one class name per line, line k = label k), and the check against the network's classes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vdnn::models {

/// The class index's file name in a run folder.
inline constexpr const char* kClassIndexFileName = "classes.txt";
/// Largest class index file read_class_index accepts.
inline constexpr std::int64_t kMaxClassIndexBytes = std::int64_t{64} << 20;

/// Writes `classes` to `path`, one per line ('\n'), through a temporary file renamed over it.
/// Throws runtime::InvalidArgument when there is no class or a name is empty or holds a line
/// break ('\n', '\r'), and runtime::Error when the file cannot be written.
void write_class_index(const std::string& path, const std::vector<std::string>& classes);

/// Reads a class index: line k (from 0) names class k; a '\r' before each '\n' is dropped and
/// the last line needs no '\n'. Throws runtime::DataError naming the file (and the line, from 1)
/// when it cannot be read, is larger than kMaxClassIndexBytes, holds no class, an empty line or a
/// name twice.
std::vector<std::string> read_class_index(const std::string& path);

/// Throws runtime::InvalidArgument saying both numbers and where they come from when the
/// network's number of classes differs from the source's: "SOURCE has K classes, but the network
/// has N outputs (num_classes); ...".
void check_num_classes(const std::vector<std::string>& classes, std::int64_t num_classes_of_network,
                       const std::string& source_description);

}  // namespace vdnn::models
