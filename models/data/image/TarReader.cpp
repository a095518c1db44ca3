// Tar indexing from headers alone (ustar, GNU and pax), checking every field a hostile archive
// could abuse, and member reads with pread.
#include "models/data/image/TarReader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "models/data/image/Printable.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

constexpr std::int64_t kBlock = 512;
constexpr std::int64_t kMaxMetadataBytes = std::int64_t{1} << 20;  // 'L' and 'x' data
constexpr std::size_t kMaxDecimalDigits = 18;

// Header fields: offset and length in the 512-byte block.
struct Field {
  std::size_t offset;
  std::size_t length;
};
constexpr Field kName{0, 100};
constexpr Field kSize{124, 12};
constexpr Field kChecksum{148, 8};
constexpr std::size_t kTypeflag = 156;
constexpr Field kMagic{257, 6};
constexpr Field kPrefix{345, 155};

using Block = std::array<std::uint8_t, kBlock>;

std::string errno_text() { return std::strerror(errno); }

// Reads up to `length` bytes at `offset`; fewer only at the end of the file.
std::int64_t pread_full(int fd, std::uint8_t* data, std::int64_t length, std::int64_t offset,
                        const std::string& path) {
  std::int64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, data + done, static_cast<std::size_t>(length - done),
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw runtime::DataError("tar:" + path + ": cannot be read: " + errno_text());
    if (n == 0) break;
    done += n;
  }
  return done;
}

// A NUL-terminated header field (or the whole field when it has no NUL).
std::string_view text_field(const Block& block, Field field) {
  const char* begin = reinterpret_cast<const char*>(block.data()) + field.offset;
  return std::string_view(begin, ::strnlen(begin, field.length));
}

// An octal field (leading spaces, then digits, then spaces or NULs; empty reads 0) or a GNU
// base-256 one (high bit of the first byte set; negative values refused).
std::optional<std::int64_t> number_field(const Block& block, Field field) {
  const std::uint8_t* bytes = block.data() + field.offset;
  if (bytes[0] & 0x80) {
    if (bytes[0] & 0x40) return std::nullopt;  // negative
    std::int64_t value = bytes[0] & 0x3f;
    for (std::size_t i = 1; i < field.length; ++i) {
      if (value > (std::numeric_limits<std::int64_t>::max() >> 8)) return std::nullopt;
      value = (value << 8) | bytes[i];
    }
    return value;
  }
  std::size_t i = 0;
  while (i < field.length && bytes[i] == ' ') ++i;
  std::int64_t value = 0;
  for (; i < field.length && bytes[i] >= '0' && bytes[i] <= '7'; ++i) {
    value = value * 8 + (bytes[i] - '0');  // at most 12 digits: no overflow
  }
  for (; i < field.length; ++i) {
    if (bytes[i] != ' ' && bytes[i] != '\0') return std::nullopt;
  }
  return value;
}

// A decimal of at most kMaxDecimalDigits digits and nothing else.
std::optional<std::int64_t> parse_decimal(std::string_view text) {
  if (text.empty() || text.size() > kMaxDecimalDigits) return std::nullopt;
  std::int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

bool checksum_matches(const Block& block, std::int64_t stored) {
  std::int64_t unsigned_sum = 0;
  std::int64_t signed_sum = 0;
  for (std::size_t i = 0; i < block.size(); ++i) {
    const bool in_field = i >= kChecksum.offset && i < kChecksum.offset + kChecksum.length;
    const std::uint8_t byte = in_field ? std::uint8_t{' '} : block[i];
    unsigned_sum += byte;
    signed_sum += static_cast<std::int8_t>(byte);
  }
  return stored == unsigned_sum || stored == signed_sum;
}

// Why `name` may not be a member's path, or nothing when it may.
std::optional<std::string> bad_name(std::string_view name) {
  if (name.empty()) return "empty name";
  if (name.find('\0') != std::string_view::npos) return "a NUL byte in the name";
  if (name[0] == '/') return "absolute path (outside the archive)";
  for (std::size_t start = 0; start <= name.size();) {
    const std::size_t slash = std::min(name.find('/', start), name.size());
    if (name.substr(start, slash - start) == "..") return "path climbs out of the archive (..)";
    start = slash + 1;
  }
  return std::nullopt;
}

std::int64_t padded(std::int64_t size) { return (size + kBlock - 1) / kBlock * kBlock; }

// One pass over the headers of a tar file, carrying GNU long names and pax overrides to the entry
// they describe.
class Indexer {
 public:
  explicit Indexer(const TarFile& file) : file_(file) {}

  TarIndex run() {
    std::int64_t offset = 0;
    Block block{};
    while (read_header(offset, block)) offset = visit(offset, block);
    return std::move(index_);
  }

 private:
  [[noreturn]] void fail(std::int64_t offset, std::string_view name, const std::string& what) {
    throw runtime::DataError("tar:" + file_.path() + ": entry \"" + printable(name) +
                             "\" (header at byte " + std::to_string(offset) + "): " + what);
  }

  // False at the end of the archive: end of file on a block boundary, or a zero block.
  bool read_header(std::int64_t offset, Block& block) {
    if (offset >= file_.size()) return false;
    const std::int64_t got = pread_full(file_.fd(), block.data(), kBlock, offset, file_.path());
    if (got < kBlock) {
      throw runtime::DataError(
          "tar:" + file_.path() + ": the file ends inside the header at byte " +
          std::to_string(offset) + " (" + std::to_string(got) + " of 512 bytes): truncated");
    }
    for (const std::uint8_t byte : block) {
      if (byte != 0) return true;
    }
    return false;
  }

  // The name the header itself gives: ustar's prefix/name, else name.
  static std::string header_name(const Block& block) {
    const std::string name(text_field(block, kName));
    const bool ustar = text_field(block, kMagic) == "ustar" && block[kMagic.offset + 5] == '\0';
    const std::string_view prefix = ustar ? text_field(block, kPrefix) : std::string_view();
    return prefix.empty() ? name : std::string(prefix) + "/" + name;
  }

  // Handles the header at `offset`; returns the offset of the next header.
  std::int64_t visit(std::int64_t offset, const Block& block) {
    std::string name = header_name(block);
    const std::optional<std::int64_t> checksum = number_field(block, kChecksum);
    if (!checksum || !checksum_matches(block, *checksum)) {
      fail(offset, name, "bad header checksum (damaged or not a tar file)");
    }
    const std::optional<std::int64_t> header_size = number_field(block, kSize);
    if (!header_size) fail(offset, name, "the size field is neither octal nor base-256");
    const char type = static_cast<char>(block[kTypeflag]);
    const std::int64_t data = offset + kBlock;
    if (type == 'L' || type == 'x') {
      read_metadata(offset, name, type, *header_size);
      return data + padded(*header_size);
    }
    if (type == 'K' || type == 'g') {  // a long link name, a pax global header: not used
      check_fits(offset, name, data, *header_size);
      return data + padded(*header_size);
    }
    if (pax_path_) name = *pax_path_;
    if (!pax_path_ && long_name_) name = *long_name_;
    // Links, devices, FIFOs and directories have no data whatever their size field says.
    const bool has_data = std::string_view("123456").find(type) == std::string_view::npos;
    const std::int64_t size = has_data ? pax_size_.value_or(*header_size) : 0;
    check_fits(offset, name, data, size);
    add_entry(offset, name, type, data, size);
    return data + padded(size);
  }

  void check_fits(std::int64_t offset, std::string_view name, std::int64_t data,
                  std::int64_t size) {
    if (size > file_.size() - data) {
      fail(offset, name,
           "data of " + std::to_string(size) + " bytes runs past the end of the file (" +
               std::to_string(file_.size() - data) +
               " bytes remain): truncated, or an absurd size");
    }
  }

  void add_entry(std::int64_t offset, const std::string& name, char type, std::int64_t data,
                 std::int64_t size) {
    if (const std::optional<std::string> why = bad_name(name)) fail(offset, name, *why);
    const bool regular = type == '0' || type == '\0' || type == '7';
    if (regular && !pax_sparse_) {
      index_.entries.push_back(TarEntry{name, data, size});
    } else if (type != '5' && type != 'D') {
      ++index_.skipped;
    }
    long_name_.reset();
    pax_path_.reset();
    pax_size_.reset();
    pax_sparse_ = false;
  }

  // Reads a GNU long name ('L') or a pax extended header ('x') for the entry that follows.
  void read_metadata(std::int64_t offset, const std::string& name, char type, std::int64_t size) {
    if (size > kMaxMetadataBytes) {
      fail(offset, name,
           "a " + std::string(type == 'L' ? "long-name" : "pax") + " header of " +
               std::to_string(size) + " bytes (at most 1 MiB accepted)");
    }
    check_fits(offset, name, offset + kBlock, size);
    std::string text(static_cast<std::size_t>(size), '\0');
    if (pread_full(file_.fd(), reinterpret_cast<std::uint8_t*>(text.data()), size, offset + kBlock,
                   file_.path()) < size) {
      fail(offset, name, "the file ends inside this header's data (did it shrink?)");
    }
    if (type == 'L') {
      long_name_ = text.substr(0, text.find('\0'));
    } else {
      parse_pax(offset, name, text);
    }
  }

  // Records "LENGTH KEY=VALUE\n", LENGTH counting the whole record.
  void parse_pax(std::int64_t offset, const std::string& name, std::string_view text) {
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t space = text.find(' ', pos);
      const std::optional<std::int64_t> length = space == std::string_view::npos
                                                     ? std::nullopt
                                                     : parse_decimal(text.substr(pos, space - pos));
      const std::string_view record =
          length && *length > static_cast<std::int64_t>(space - pos + 1) &&
                  *length <= static_cast<std::int64_t>(text.size() - pos)
              ? text.substr(space + 1, static_cast<std::size_t>(*length) - (space - pos) - 1)
              : std::string_view();
      const std::size_t equals = record.find('=');
      if (record.empty() || record.back() != '\n' || equals == std::string_view::npos) {
        fail(offset, name,
             "pax record at byte " + std::to_string(pos) +
                 " of the extended header has a bad length or no KEY=VALUE");
      }
      apply_pax(offset, name, record.substr(0, equals),
                record.substr(equals + 1, record.size() - equals - 2));
      pos += static_cast<std::size_t>(*length);
    }
  }

  // An empty value drops the override (pax: the header's field applies again).
  void apply_pax(std::int64_t offset, const std::string& name, std::string_view key,
                 std::string_view value) {
    if (key == "path") {
      pax_path_ = value.empty() ? std::nullopt : std::optional<std::string>(value);
    } else if (key == "size") {
      pax_size_ = value.empty() ? std::nullopt : parse_decimal(value);
      if (!value.empty() && !pax_size_) {
        fail(offset, name,
             "pax size \"" + printable(value) + "\" is not a decimal of <= 18 digits");
      }
    } else if (key.substr(0, 11) == "GNU.sparse.") {
      pax_sparse_ = true;
    }
  }

  const TarFile& file_;
  TarIndex index_;
  std::optional<std::string> long_name_;
  std::optional<std::string> pax_path_;
  std::optional<std::int64_t> pax_size_;
  bool pax_sparse_ = false;
};

}  // namespace

TarFile::TarFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw runtime::DataError("tar:" + path + ": cannot be opened: " + errno_text());
  struct stat info {};
  const bool stated = ::fstat(fd_, &info) == 0;
  if (!stated || !S_ISREG(info.st_mode)) {
    const std::string why = stated ? "not a regular file" : errno_text();
    ::close(fd_);
    throw runtime::DataError("tar:" + path + ": cannot be opened: " + why);
  }
  size_ = info.st_size;
}

TarFile::TarFile(TarFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(std::exchange(other.size_, 0)) {}

TarFile& TarFile::operator=(TarFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

TarFile::~TarFile() {
  if (fd_ >= 0) ::close(fd_);
}

TarIndex index_tar(const TarFile& tar) { return Indexer(tar).run(); }

void read_member(const TarFile& tar, const TarEntry& entry, std::vector<std::uint8_t>& out) {
  const auto fail = [&](const std::string& what) {
    throw runtime::DataError("tar:" + tar.path() + ": entry \"" + printable(entry.name) +
                             "\" (data at byte " + std::to_string(entry.offset) + "): " + what);
  };
  if (entry.size < 0 || entry.size > kMaxTarMemberBytes) {
    fail(std::to_string(entry.size) + " bytes, at most " + std::to_string(kMaxTarMemberBytes) +
         " read");
  }
  if (entry.offset < 0 || entry.size > tar.size() - entry.offset) {
    fail("lies past the end of the file (" + std::to_string(tar.size()) +
         " bytes; did it change since it was indexed?)");
  }
  out.resize(static_cast<std::size_t>(entry.size));
  if (pread_full(tar.fd(), out.data(), entry.size, entry.offset, tar.path()) < entry.size) {
    fail("the file ends inside it (did it shrink since it was indexed?)");
  }
}

}  // namespace vdnn::models
