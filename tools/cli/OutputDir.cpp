// Checks --out up front: before this, an unwritable output directory surfaced only after the
// whole setup, as a raw filesystem error.
#include "tools/cli/OutputDir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "runtime/Error.hpp"

namespace vdnn::tools {

void prepare_output_dir(const std::filesystem::path& dir) {
  const std::string where = "--out " + dir.string();
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(dir, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_directory(status)) {
    throw runtime::InvalidArgument(where + ": exists and is not a directory");
  }
  if (!std::filesystem::exists(status)) {
    std::filesystem::create_directories(dir, error);
    if (error) throw runtime::InvalidArgument(where + ": cannot create it: " + error.message());
  }
  // A probe file rather than access(): root passes access() everywhere, /proc included, and
  // only creating a file tells what the writes at the end of training will meet.
  const std::filesystem::path probe = dir / (".vdnn-write-check-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    throw runtime::InvalidArgument(where + ": cannot create files in it: " + std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace vdnn::tools
