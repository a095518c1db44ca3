// The setup cache's files: one JSON object per entry, checked field by field and by checksum when
// read, written to a unique temporary file and renamed into place (Note [Cost model]).
#include "runtime/DiskCache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <system_error>
#include <utility>

#include "runtime/Error.hpp"

namespace vdnn::runtime {
namespace {

using Json = nlohmann::json;

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

bool valid_kind(const std::string& kind) {
  if (kind.empty()) return false;
  for (const char c : kind) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// Why `j` (a parsed file) is not the entry (kind, fingerprint, key); empty when it is.
std::string mismatch(const Json& j, const std::string& kind, const std::string& fingerprint,
                     const std::string& key) {
  if (!j.is_object()) return "not a JSON object";
  const auto string_field = [&j](const char* name) -> const std::string* {
    const auto it = j.find(name);
    return it != j.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
  };
  const auto format = j.find("format");
  if (format == j.end() || !format->is_number_integer()) return "no format";
  if (format->get<std::int64_t>() != kDiskCacheFormat) {
    return "format " + format->dump() + ", expected " + std::to_string(kDiskCacheFormat);
  }
  const std::string* file_kind = string_field("kind");
  const std::string* file_fingerprint = string_field("fingerprint");
  const std::string* file_key = string_field("key");
  const std::string* checksum = string_field("checksum");
  const std::string* value = string_field("value");
  if (!file_kind || !file_fingerprint || !file_key || !checksum || !value) {
    return "a field is missing (kind, fingerprint, key, checksum, value)";
  }
  if (*file_kind != kind) return "kind \"" + *file_kind + "\", expected \"" + kind + "\"";
  if (*file_fingerprint != fingerprint) return "written for another setup (fingerprint)";
  if (*file_key != key) return "written for another key";
  if (*checksum != cache_checksum(*value)) return "checksum mismatch";
  return {};
}

std::string errno_text() { return std::strerror(errno); }

// Writes `bytes` to a new file `path`; an error message on failure (the file may then exist).
std::string write_new_file(const std::filesystem::path& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno_text();
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string error = n < 0 ? errno_text() : "short write";
      ::close(fd);
      return error;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) return errno_text();
  return {};
}

// Reads the whole regular file `fd` into `bytes`; an error message when it is not one, cannot be
// read or holds more than kDiskCacheMaxFileBytes (then unread: a huge file costs no memory).
std::string read_bounded(int fd, std::string& bytes) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return errno_text();
  if (!S_ISREG(info.st_mode)) return "not a regular file";
  const std::string too_large =
      "larger than " + std::to_string(kDiskCacheMaxFileBytes >> 20) + " MiB";
  if (static_cast<std::uint64_t>(info.st_size) > kDiskCacheMaxFileBytes) return too_large;
  bytes.resize(static_cast<std::size_t>(info.st_size) + 1);
  std::size_t done = 0;
  for (;;) {
    if (done == bytes.size()) {  // grew since fstat (written in place by someone else)
      if (bytes.size() > kDiskCacheMaxFileBytes) return too_large;
      bytes.resize(std::min<std::size_t>(2 * bytes.size(), kDiskCacheMaxFileBytes + 1));
    }
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_text();
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return {};
}

}  // namespace

std::uint64_t fnv1a64(const std::string& text) noexcept {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string cache_checksum(const std::string& value) { return hex64(fnv1a64(value)); }

DiskCache::DiskCache(std::filesystem::path dir, std::string fingerprint, WarningSink warn)
    : dir_(std::move(dir)), fingerprint_(std::move(fingerprint)), warn_(std::move(warn)) {
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  if (!error && !std::filesystem::is_directory(dir_, error)) {
    error = std::make_error_code(std::errc::not_a_directory);
  }
  if (error) {
    throw Error("cannot create the cache directory " + dir_.string() + ": " + error.message());
  }
  std::random_device device;
  salt_ = (std::uint64_t{device()} << 32) ^ device() ^
          static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

std::filesystem::path DiskCache::file(const std::string& kind, const std::string& key) const {
  VDNN_EXPECTS(valid_kind(kind), "DiskCache: the kind \"" + kind + "\" is not a word of [a-z0-9_]");
  // The fingerprint's length first, so that no (fingerprint, key) pair is another's concatenation.
  const std::string hashed = std::to_string(fingerprint_.size()) + ":" + fingerprint_ + key;
  return dir_ / (kind + "-" + hex64(fnv1a64(hashed)) + ".json");
}

void DiskCache::warn(const std::string& message) const noexcept {
  if (!warn_) return;
  const std::lock_guard<std::mutex> lock(warn_mutex_);
  try {
    warn_(message);
  } catch (...) {  // a warning must not end the run
  }
}

std::optional<std::string> DiskCache::load(const std::string& kind, const std::string& key) const {
  const std::filesystem::path path = file(kind, key);
  const auto ignore = [&](const std::string& why) -> std::optional<std::string> {
    warn("ignoring cache file " + path.string() + ": " + why);
    return std::nullopt;
  };
  // Opened first, then sized and read through the one descriptor: the name may be renamed over
  // by a writer at any time, and the file it named then stays whole for this reader.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    return ignore(errno_text());
  }
  std::string bytes;
  const std::string error = read_bounded(fd, bytes);
  ::close(fd);
  if (!error.empty()) return ignore(error);
  const Json j = Json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return ignore("not valid JSON (damaged or truncated)");
  const std::string why = mismatch(j, kind, fingerprint_, key);
  if (!why.empty()) return ignore(why);
  return j.at("value").get<std::string>();
}

void DiskCache::store(const std::string& kind, const std::string& key, const std::string& value) {
  const std::filesystem::path path = file(kind, key);
  const auto fail = [&](const std::string& why) {
    warn("cannot write cache file " + path.string() + ": " + why);
  };
  std::string bytes;
  try {
    bytes = Json{{"format", kDiskCacheFormat},        {"kind", kind},
                 {"fingerprint", fingerprint_},       {"key", key},
                 {"checksum", cache_checksum(value)}, {"value", value}}
                .dump() +
            "\n";
  } catch (const Json::exception& e) {  // e.g. text that is not UTF-8
    fail(e.what());
    return;
  }
  if (bytes.size() > kDiskCacheMaxFileBytes) {
    fail("larger than " + std::to_string(kDiskCacheMaxFileBytes >> 20) + " MiB");
    return;
  }
  // Unique per process (pid), per call (counter) and per cache object (salt): no two writers ever
  // share a temporary file, and the rename makes one whole file win.
  const std::uint64_t call = counter_.fetch_add(1);
  const std::filesystem::path partial = path.string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(call) + "-" +
                                        hex64(salt_ ^ (call * 0x9e3779b97f4a7c15ULL));
  const std::string error = write_new_file(partial, bytes);
  std::error_code ignored;
  if (!error.empty()) {
    std::filesystem::remove(partial, ignored);
    fail(error);
    return;
  }
  std::error_code renamed;
  std::filesystem::rename(partial, path, renamed);
  if (renamed) {
    std::filesystem::remove(partial, ignored);
    fail(renamed.message());
  }
}

std::filesystem::path default_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && std::filesystem::path(xdg).is_absolute()) {
    return std::filesystem::path(xdg) / "vdnn";
  }
  const char* home = std::getenv("HOME");
  if (home != nullptr && std::filesystem::path(home).is_absolute()) {
    return std::filesystem::path(home) / ".cache" / "vdnn";
  }
  return {};
}

std::string cpu_fingerprint() { return "cpu format " + std::to_string(kDiskCacheFormat); }

}  // namespace vdnn::runtime
