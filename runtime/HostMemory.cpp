// Reads the host's available memory from /proc and the cgroup v2 files (Linux).
#include "runtime/HostMemory.hpp"

#include <unistd.h>

#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

namespace vdnn::runtime {
namespace {

// The value of "Key:   123 kB" in /proc/meminfo, in bytes.
std::optional<std::uint64_t> meminfo_bytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    std::uint64_t kib = 0;
    if (fields >> name >> kib && name == key + ":") return kib * 1024;
  }
  return std::nullopt;
}

// A cgroup v2 file holding one number ("max" means no limit).
std::optional<std::uint64_t> cgroup_number(const std::string& file) {
  std::ifstream in("/sys/fs/cgroup/" + file);
  std::uint64_t value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

}  // namespace

HostMemory available_host_memory() {
  HostMemory memory{std::numeric_limits<std::uint64_t>::max(), "nothing readable"};
  if (const auto bytes = meminfo_bytes("MemAvailable")) {
    memory = {*bytes, "MemAvailable in /proc/meminfo"};
  } else {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES);
    const long page_bytes = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_bytes > 0) {
      memory = {static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes),
                "free pages (sysconf)"};
    }
  }
  const auto limit = cgroup_number("memory.max");
  const auto current = cgroup_number("memory.current");
  if (limit && current) {
    const std::uint64_t left = *limit > *current ? *limit - *current : 0;
    if (left < memory.available_bytes)
      memory = {left, "the cgroup's memory.max less memory.current"};
  }
  return memory;
}

}  // namespace vdnn::runtime
