// DiskCache: setup results (measured convolution algorithms, measured cost models) kept as text
// values in a directory between runs, one file per entry, checked on every read and written
// atomically (Note [Cost model] in docs/ARCHITECTURE.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace vdnn::runtime {

/// The cache format: part of every file (its "format") and of the CPU backend's fingerprint.
inline constexpr int kDiskCacheFormat = 1;
/// Files larger than this are ignored unread (with a warning).
inline constexpr std::uint64_t kDiskCacheMaxFileBytes = std::uint64_t{64} << 20;

/// A keyed store of text values in a directory. Every entry is one file
/// `<dir>/<kind>-<16 hex digits>.json` (the digits hash the fingerprint and the key) holding
/// {"format", "kind", "fingerprint", "key", "checksum", "value"}. The fingerprint names what the
/// values are valid for (device, driver and library versions): another fingerprint is another file
/// name, so changing it invalidates every entry.
///
/// Nothing read is trusted: a file that cannot be read, does not parse, is larger than
/// kDiskCacheMaxFileBytes, is for another format, kind, fingerprint or key, or whose value does
/// not match its checksum is ignored with one warning through the sink and counts as a miss. A
/// missing file is a miss without warning. Writes go to a temporary file unique to the process and
/// call, then are renamed over the final name, so readers and concurrent writers (threads or
/// processes) only ever see whole files; a failed write is a warning and leaves no file behind.
/// Thread-safe: load() and store() may be called from several threads at once (they share no
/// state but an atomic counter; the sink is called under a mutex).
class DiskCache {
 public:
  using WarningSink = std::function<void(const std::string&)>;

  /// Creates `dir` when needed. Throws runtime::Error naming `dir` when it cannot. `warn` receives
  /// one line per ignored file or failed write (no "vdnn: " prefix, no newline), from one
  /// thread at a time; it may be empty.
  DiskCache(std::filesystem::path dir, std::string fingerprint, WarningSink warn);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;
  DiskCache(DiskCache&&) = delete;
  DiskCache& operator=(DiskCache&&) = delete;
  ~DiskCache() = default;

  /// The value stored for (`kind`, this fingerprint, `key`); nullopt when there is none or the
  /// file is ignored (see above). Never throws but InvalidArgument for a bad kind.
  std::optional<std::string> load(const std::string& kind, const std::string& key) const;
  /// Stores `value` for (`kind`, this fingerprint, `key`), replacing the entry. Failures are
  /// warnings, never exceptions (but InvalidArgument for a bad kind).
  void store(const std::string& kind, const std::string& key, const std::string& value);

  /// The file of (`kind`, `key`). `kind` is a non-empty word of [a-z0-9_]; else InvalidArgument.
  std::filesystem::path file(const std::string& kind, const std::string& key) const;
  const std::filesystem::path& directory() const noexcept { return dir_; }
  const std::string& fingerprint() const noexcept { return fingerprint_; }
  /// Sends `message` to the warning sink: for users of the cache that find an entry unusable
  /// (e.g. a stored convolution algorithm cuDNN no longer accepts). Never throws.
  void warn(const std::string& message) const noexcept;

 private:
  std::filesystem::path dir_;
  std::string fingerprint_;
  WarningSink warn_;
  mutable std::mutex warn_mutex_;          // the sink is called by one thread at a time
  std::uint64_t salt_;                     // random, per cache object: part of temporary names
  std::atomic<std::uint64_t> counter_{0};  // per store() call: part of temporary names
};

/// FNV-1a, 64 bits, of `text` (the cache's checksums and file-name hashes).
std::uint64_t fnv1a64(const std::string& text) noexcept;
/// A cache file's "checksum" of its `value`: fnv1a64 as 16 lower-case hex digits.
std::string cache_checksum(const std::string& value);

/// Where the cache lives by default: `$XDG_CACHE_HOME/vdnn` when XDG_CACHE_HOME is set and
/// absolute, else `$HOME/.cache/vdnn` when HOME is set and absolute, else an empty path (no
/// default). Reads the environment on every call; never throws.
std::filesystem::path default_cache_dir();

/// The fingerprint of the CPU backend's entries: "cpu" and the cache format.
std::string cpu_fingerprint();

}  // namespace vdnn::runtime
