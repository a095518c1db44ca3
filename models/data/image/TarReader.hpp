// TarReader: indexes the regular files of a tar archive (WebDataset shards) from its headers alone
// and reads members by offset, so many threads can read one shard at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vdnn::models {

/// One regular file of a tar: its path in the archive and where its bytes lie in the tar file.
struct TarEntry {
  std::string name;
  std::int64_t offset = 0;  // of the first data byte, from the start of the tar file
  std::int64_t size = 0;
};

/// What index_tar found: the regular files in archive order, and how many other entries it
/// skipped (see index_tar).
struct TarIndex {
  std::vector<TarEntry> entries;
  std::int64_t skipped = 0;
};

/// Largest member read_member reads (an image larger than this is no image).
inline constexpr std::int64_t kMaxTarMemberBytes = std::int64_t{1} << 30;

/// An open tar file, read-only. The one owner of its file descriptor (closed on destruction);
/// move-only. Reading is thread-safe: several threads may call read_member on one TarFile.
class TarFile {
 public:
  /// Opens `path`; throws runtime::DataError ("tar:PATH: cannot be opened: REASON").
  explicit TarFile(const std::string& path);
  TarFile(const TarFile&) = delete;
  TarFile& operator=(const TarFile&) = delete;
  TarFile(TarFile&& other) noexcept;
  TarFile& operator=(TarFile&& other) noexcept;
  ~TarFile();

  const std::string& path() const noexcept { return path_; }
  /// The descriptor, owned here; valid until this object is destroyed or moved from.
  int fd() const noexcept { return fd_; }
  /// The file's size in bytes when it was opened.
  std::int64_t size() const noexcept { return size_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::int64_t size_ = 0;
};

/// Indexes `tar` reading only its 512-byte headers (and the data of GNU long-name and pax
/// records). Understands v7, ustar (prefix + name), GNU (long names, type 'L'; long link
/// names 'K' are read past) and pax (type 'x': `path` and `size` override the next header's;
/// type 'g' global headers are ignored). Names are kept as written (`./a.jpg` stays so).
/// Regular files (types '0', NUL and '7') are entries. Directories ('5', 'D') are skipped; hard
/// and symbolic links ('1', '2'), devices and FIFOs ('3', '4', '6'), GNU sparse files ('S', or pax
/// GNU.sparse.* records) and unknown types are skipped and counted in `skipped`, never followed.
/// The archive ends at its first all-zero header block (the second one of the end marker is not
/// required) or at the end of the file on a header boundary (or inside the last member's padding).
/// Throws runtime::DataError starting "tar:PATH: " and naming the entry and its header's byte
/// offset when the file cannot be read, or a header is hostile or damaged: a name that
/// is empty, absolute, holds a NUL byte or a `..` component (a path outside the archive); a bad
/// header checksum (accepted computed over unsigned or signed bytes, as GNU tar does); a size
/// field that is neither octal nor positive base-256; a member whose data runs past the end of the
/// file (truncated, or an absurd size); a file ending inside a header; a pax record whose length
/// is not a decimal that fits its header, or a pax size that is no decimal; a long-name or pax
/// header over 1 MiB. Reads with pread only: may run while other threads read members.
TarIndex index_tar(const TarFile& tar);

/// Replaces `out` with the `entry.size` bytes at `entry.offset` of `tar` (pread: no shared file
/// position, so threads may read one TarFile concurrently; `out` must be each thread's own).
/// `out` keeps its capacity, so a reused buffer stops allocating. Throws runtime::DataError naming
/// the tar file and the entry when the entry is larger than kMaxTarMemberBytes, lies past the end
/// of the file (the file shrank since it was indexed) or cannot be read.
void read_member(const TarFile& tar, const TarEntry& entry, std::vector<std::uint8_t>& out);

}  // namespace vdnn::models
