// Fuzz target of the tar reader: bytes -> a temporary file -> models::index_tar -> read_member of
// every entry. Every rejection must be a typed vdnn error; a crash, a sanitizer report, a foreign
// exception, an allocation over the fuzzer's limit, or an index that breaks the reader's promises
// (an entry outside the file, a name outside the archive) is a bug.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "models/data/image/TarReader.hpp"
#include "runtime/Error.hpp"

namespace {

// One temporary file per process, rewritten for each input and removed at exit.
class ScratchFile {
 public:
  ScratchFile() {
    char name[] = "/tmp/vdnn-tar-fuzz-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0) std::abort();
    ::close(fd);
    path_ = name;
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile() { ::unlink(path_.c_str()); }

  const std::string& write(const std::uint8_t* data, std::size_t size) const {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) std::abort();
    for (std::size_t done = 0; done < size;) {
      const ssize_t n = ::write(fd, data + done, size - done);
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return path_;
  }

 private:
  std::string path_;
};

// What index_tar promises about every entry it returns.
bool entry_is_sound(const vdnn::models::TarEntry& entry, std::int64_t file_size) {
  const std::string& name = entry.name;
  const std::string wrapped = "/" + name + "/";
  return !name.empty() && name[0] != '/' && wrapped.find("/../") == std::string::npos &&
         name.find('\0') == std::string::npos && entry.offset % 512 == 0 && entry.size >= 0 &&
         entry.offset + entry.size <= file_size;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ScratchFile scratch;
  const std::string& path = scratch.write(data, size);
  try {
    const vdnn::models::TarFile tar(path);
    std::vector<std::uint8_t> bytes;
    for (const vdnn::models::TarEntry& entry : vdnn::models::index_tar(tar).entries) {
      if (!entry_is_sound(entry, tar.size())) std::abort();
      vdnn::models::read_member(tar, entry, bytes);
      if (bytes.size() != static_cast<std::size_t>(entry.size)) std::abort();
    }
  } catch (const vdnn::runtime::Error&) {
    // A typed rejection (DataError): the expected outcome for most inputs.
  }
  return 0;
}
