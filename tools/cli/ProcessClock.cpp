// The process's age from /proc/self/stat (field 22, start time in clock ticks since boot).
#include "tools/cli/ProcessClock.hpp"

#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace vdnn::tools {

double seconds_since_process_start() {
  std::ifstream in("/proc/self/stat");
  std::string stat;
  if (!std::getline(in, stat)) return -1.0;
  // The command name (field 2) may hold spaces: fields after it are counted from its ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1.0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i < 22 && fields >> field; ++i) {
  }
  unsigned long long ticks = 0;
  if (!(fields >> ticks)) return -1.0;
  timespec now{};
  const long hz = sysconf(_SC_CLK_TCK);
  if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1.0;
  const double uptime = static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
  return uptime - static_cast<double>(ticks) / static_cast<double>(hz);
}

}  // namespace vdnn::tools
