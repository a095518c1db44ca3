// The safetensors format: encoding, strict validation on decode, the vdnn checksum, and the
// atomic write (temp file, fsync, rename, fsync of the directory).
#include "models/train/Safetensors.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <utility>

// Note [Safetensors layout]
// A file is: 8 bytes, the little-endian u64 length N of the header; N bytes of JSON (an object
// mapping each tensor name to {"dtype", "shape", "data_offsets": [begin, end]}, plus an optional
// "__metadata__" object of strings), padded with spaces so that the data starts 8-byte aligned;
// then the data section, every tensor's raw little-endian bytes, contiguous, offsets relative to
// the data start. vdnn adds "vdnn.checksum" to the metadata: FNV-1a 64 over the header as
// nlohmann::json dumps it without the checksum (compact, keys sorted) followed by the data
// section. Hosts are assumed little-endian (x86-64, AArch64), so data is copied as is.

namespace vdnn::models {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::pair<TensorDType, const char*>, 10> kDTypes{{
    {TensorDType::F64, "F64"},
    {TensorDType::F32, "F32"},
    {TensorDType::F16, "F16"},
    {TensorDType::BF16, "BF16"},
    {TensorDType::I64, "I64"},
    {TensorDType::I32, "I32"},
    {TensorDType::I16, "I16"},
    {TensorDType::I8, "I8"},
    {TensorDType::U8, "U8"},
    {TensorDType::Bool, "BOOL"},
}};

constexpr std::size_t kWriteChunk = std::size_t{1} << 20;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw CheckpointError("checkpoint " + source + ": " + what);
}

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// Elements of `shape` times `size`, or nullopt-like max on overflow (then it matches no span).
std::uint64_t shape_bytes(const std::vector<std::int64_t>& shape, std::size_t size) {
  std::uint64_t bytes = size;
  for (std::int64_t d : shape) {
    const auto dim = static_cast<std::uint64_t>(d);
    if (dim != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / dim) {
      return std::numeric_limits<std::uint64_t>::max();
    }
    bytes *= dim;
  }
  return bytes;
}

std::uint64_t checksum(const Json& header_without_checksum, const std::byte* data,
                       std::size_t size) {
  const std::string text = header_without_checksum.dump();
  return fnv1a64(data, size, fnv1a64(text.data(), text.size()));
}

TensorDType parse_dtype(const Json& value, const std::string& source, const std::string& name) {
  if (value.is_string()) {
    for (const auto& [dtype, text] : kDTypes) {
      if (value.get<std::string>() == text) return dtype;
    }
  }
  std::string known;
  for (const auto& entry : kDTypes) known += std::string(known.empty() ? "" : ", ") + entry.second;
  fail(source,
       "tensor '" + name + "' has unknown dtype " + value.dump() + " (known: " + known + ")");
}

std::vector<std::int64_t> parse_shape(const Json& value, const std::string& source,
                                      const std::string& name) {
  std::vector<std::int64_t> shape;
  const bool ok = value.is_array() && std::all_of(value.begin(), value.end(), [](const Json& d) {
                    return d.is_number_unsigned();
                  });
  if (!ok)
    fail(source, "tensor '" + name + "' has shape " + value.dump() +
                     ", not an array of non-negative integers");
  for (const Json& d : value) {
    const auto dim = d.get<std::uint64_t>();
    if (dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail(source, "tensor '" + name + "' has a dimension too large: " + value.dump());
    }
    shape.push_back(static_cast<std::int64_t>(dim));
  }
  return shape;
}

struct Entry {
  SafetensorsTensor tensor;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

Entry parse_entry(const std::string& name, const Json& info, std::uint64_t data_size,
                  const std::string& source) {
  if (!info.is_object() || info.size() != 3 || !info.contains("dtype") || !info.contains("shape") ||
      !info.contains("data_offsets")) {
    fail(source, "tensor '" + name + "' must be an object of exactly \"dtype\", \"shape\" and " +
                     "\"data_offsets\", found " + info.dump());
  }
  Entry e;
  e.tensor.name = name;
  e.tensor.dtype = parse_dtype(info["dtype"], source, name);
  e.tensor.shape = parse_shape(info["shape"], source, name);
  const Json& offsets = info["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned()) {
    fail(source, "tensor '" + name + "' has data_offsets " + offsets.dump() +
                     ", not [begin, end] of non-negative integers");
  }
  e.begin = offsets[0].get<std::uint64_t>();
  e.end = offsets[1].get<std::uint64_t>();
  if (e.begin > e.end || e.end > data_size) {
    fail(source, "tensor '" + name + "' has data_offsets " + offsets.dump() +
                     " outside the data section of " + std::to_string(data_size) + " bytes");
  }
  const std::uint64_t expected = shape_bytes(e.tensor.shape, dtype_size(e.tensor.dtype));
  if (e.end - e.begin != expected) {
    fail(source, "tensor '" + name + "' spans " + std::to_string(e.end - e.begin) +
                     " bytes but shape " + shape_string(e.tensor.shape) + " of " +
                     dtype_name(e.tensor.dtype) + " needs " + std::to_string(expected));
  }
  return e;
}

std::map<std::string, std::string> parse_metadata(const Json& value, const std::string& source) {
  std::map<std::string, std::string> metadata;
  if (!value.is_object()) fail(source, "__metadata__ is not an object: " + value.dump());
  for (const auto& [key, text] : value.items()) {
    if (!text.is_string()) {
      fail(source, "__metadata__ key '" + key + "' is not a string: " + text.dump());
    }
    metadata[key] = text.get<std::string>();
  }
  return metadata;
}

// Tensors sorted by offset must tile the data section exactly: no overlap, no gap.
void check_tiling(std::vector<Entry>& entries, std::uint64_t data_size, const std::string& source) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::make_pair(a.begin, a.end) < std::make_pair(b.begin, b.end);
  });
  std::uint64_t covered = 0;
  const std::string* previous = nullptr;
  for (const Entry& e : entries) {
    if (e.begin < covered) {
      fail(source, "tensor '" + e.tensor.name + "' [" + std::to_string(e.begin) + ", " +
                       std::to_string(e.end) + ") overlaps tensor '" + *previous + "' (ending at " +
                       std::to_string(covered) + ")");
    }
    if (e.begin > covered) {
      fail(source, "bytes [" + std::to_string(covered) + ", " + std::to_string(e.begin) +
                       ") of the data section belong to no tensor");
    }
    covered = e.end;
    previous = &e.tensor.name;
  }
  if (covered != data_size) {
    fail(source, "the data section has " + std::to_string(data_size) +
                     " bytes but the tensors cover " + std::to_string(covered) +
                     " (truncated or trailing bytes)");
  }
}

void verify_checksum(Json& header, const std::byte* data, std::size_t size,
                     const std::string& source, bool require) {
  auto metadata = header.find("__metadata__");
  const bool present =
      metadata != header.end() && metadata->is_object() && metadata->contains(kChecksumKey);
  if (!present) {
    if (require) {
      fail(source, std::string("no \"") + kChecksumKey +
                       "\" in __metadata__: not written by vdnn, or its header is corrupted");
    }
    return;
  }
  const Json recorded = (*metadata)[kChecksumKey];
  metadata->erase(kChecksumKey);
  if (metadata->empty()) header.erase(metadata);
  const std::string actual = hex64(checksum(header, data, size));
  if (!recorded.is_string() || recorded.get<std::string>() != actual) {
    fail(source, "checksum mismatch: header and data hash to " + actual + " but the file records " +
                     recorded.dump() + ": the file is corrupted");
  }
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  FileDescriptor(FileDescriptor&&) = delete;
  FileDescriptor& operator=(FileDescriptor&&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  // Closing reports write-back errors (NFS): checked, unlike the destructor's.
  int close() noexcept { return ::close(std::exchange(fd_, -1)); }

 private:
  int fd_;
};

// Removes the temp file unless dismissed: every failure path of the write leaves nothing behind.
class TempFileGuard {
 public:
  explicit TempFileGuard(std::filesystem::path path) : path_(std::move(path)) {}
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  TempFileGuard(TempFileGuard&&) = delete;
  TempFileGuard& operator=(TempFileGuard&&) = delete;
  ~TempFileGuard() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  void dismiss() noexcept { path_.clear(); }

 private:
  std::filesystem::path path_;
};

[[noreturn]] void fail_errno(const std::filesystem::path& path, const std::string& what) {
  const int error = errno;
  throw CheckpointError("checkpoint " + quoted(path) + ": " + what + ": " + std::strerror(error));
}

void write_all(int fd, const std::vector<std::byte>& bytes, const std::filesystem::path& path,
               const WriteProgress& progress) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const std::size_t chunk = std::min(kWriteChunk, bytes.size() - written);
    const ssize_t n = ::write(fd, bytes.data() + written, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno(path, "cannot write the temp file");
    written += static_cast<std::size_t>(n);
    if (progress) progress(written);
  }
}

}  // namespace

std::size_t dtype_size(TensorDType dtype) noexcept {
  switch (dtype) {
    case TensorDType::F64:
    case TensorDType::I64:
      return 8;
    case TensorDType::F32:
    case TensorDType::I32:
      return 4;
    case TensorDType::F16:
    case TensorDType::BF16:
    case TensorDType::I16:
      return 2;
    case TensorDType::I8:
    case TensorDType::U8:
    case TensorDType::Bool:
      return 1;
  }
  return 1;
}

const char* dtype_name(TensorDType dtype) noexcept {
  for (const auto& [known, text] : kDTypes) {
    if (known == dtype) return text;
  }
  return "?";
}

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::ostringstream out;
  out << "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

std::uint64_t fnv1a64(const void* bytes, std::size_t size, std::uint64_t hash) noexcept {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::vector<std::byte> encode_safetensors(const SafetensorsFile& file) {
  Json header = Json::object();
  std::uint64_t offset = 0;
  for (const SafetensorsTensor& t : file.tensors) {
    if (t.name == "__metadata__" || header.contains(t.name)) {
      throw CheckpointError("cannot encode a checkpoint: tensor name '" + t.name +
                            "' is reserved or repeated");
    }
    if (t.data.size() != shape_bytes(t.shape, dtype_size(t.dtype))) {
      throw CheckpointError("cannot encode a checkpoint: tensor '" + t.name + "' holds " +
                            std::to_string(t.data.size()) + " bytes, not what shape " +
                            shape_string(t.shape) + " of " + dtype_name(t.dtype) + " needs");
    }
    header[t.name] = {{"dtype", dtype_name(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  if (file.metadata.count(kChecksumKey) != 0) {
    throw CheckpointError(std::string("cannot encode a checkpoint: metadata may not hold ") +
                          kChecksumKey);
  }
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;

  std::vector<std::byte> data;
  data.reserve(offset);
  for (const SafetensorsTensor& t : file.tensors)
    data.insert(data.end(), t.data.begin(), t.data.end());

  std::string text;
  try {
    header["__metadata__"][kChecksumKey] = hex64(checksum(header, data.data(), data.size()));
    text = header.dump();
  } catch (const Json::exception& e) {  // e.g. metadata that is not UTF-8
    throw CheckpointError(std::string("cannot encode a checkpoint header: ") + e.what());
  }
  text.resize((text.size() + 7) / 8 * 8, ' ');

  std::vector<std::byte> bytes(8 + text.size() + data.size());
  const std::uint64_t length = text.size();
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::byte>((length >> (8 * i)) & 0xff);
  std::memcpy(bytes.data() + 8, text.data(), text.size());
  if (!data.empty()) std::memcpy(bytes.data() + 8 + text.size(), data.data(), data.size());
  return bytes;
}

SafetensorsFile decode_safetensors(const std::vector<std::byte>& bytes, const std::string& source,
                                   bool require_checksum) {
  if (bytes.size() < 8) {
    fail(source, "truncated: " + std::to_string(bytes.size()) +
                     " bytes, fewer than the 8-byte header length");
  }
  std::uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= std::to_integer<std::uint64_t>(bytes[i]) << (8 * i);
  if (length > kMaxHeaderBytes) {
    fail(source, "header length " + std::to_string(length) + " exceeds the limit of " +
                     std::to_string(kMaxHeaderBytes) + " bytes (corrupted or not safetensors)");
  }
  if (length > bytes.size() - 8) {
    fail(source, "header length " + std::to_string(length) + " is larger than the " +
                     std::to_string(bytes.size() - 8) + " bytes after it (truncated?)");
  }
  const auto* text = reinterpret_cast<const char*>(bytes.data() + 8);
  Json header;
  try {
    header = Json::parse(text, text + length);
  } catch (const Json::parse_error& e) {
    fail(source, std::string("the header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) fail(source, "the header is not a JSON object");
  const std::byte* data = bytes.data() + 8 + length;
  const std::uint64_t data_size = bytes.size() - 8 - length;
  verify_checksum(header, data, data_size, source, require_checksum);

  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      file.metadata = parse_metadata(info, source);
    } else {
      entries.push_back(parse_entry(name, info, data_size, source));
    }
  }
  check_tiling(entries, data_size, source);
  for (Entry& e : entries) {
    e.tensor.data.assign(data + e.begin, data + e.end);
    file.tensors.push_back(std::move(e.tensor));
  }
  return file;
}

void write_file_atomically(const std::filesystem::path& path, const std::vector<std::byte>& bytes,
                           const WriteProgress& progress) {
  std::filesystem::path temp = path;
  temp += ".tmp-" + std::to_string(::getpid());
  FileDescriptor fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) fail_errno(path, "cannot create " + quoted(temp));
  TempFileGuard guard(temp);
  write_all(fd.get(), bytes, path, progress);
  if (::fsync(fd.get()) != 0) fail_errno(path, "cannot fsync " + quoted(temp));
  if (fd.close() != 0) fail_errno(path, "cannot close " + quoted(temp));
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    fail_errno(path, "cannot rename " + quoted(temp) + " over it");
  }
  guard.dismiss();
  // The rename is durable only once the directory entry is on disk.
  const std::filesystem::path parent = path.has_parent_path() ? path.parent_path() : ".";
  FileDescriptor dir(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0 || ::fsync(dir.get()) != 0) {
    fail_errno(path, "written, but cannot fsync its directory " + quoted(parent));
  }
}

void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file,
                       const WriteProgress& progress) {
  write_file_atomically(path, encode_safetensors(file), progress);
}

SafetensorsFile read_safetensors(const std::filesystem::path& path, bool require_checksum) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    throw CheckpointError("checkpoint " + quoted(path) + ": cannot open: " + std::strerror(errno));
  }
  const std::streamsize size = in.tellg();
  std::vector<std::byte> bytes(static_cast<std::size_t>(std::max<std::streamsize>(size, 0)));
  in.seekg(0);
  if (size < 0 || !in.read(reinterpret_cast<char*>(bytes.data()), size)) {
    throw CheckpointError("checkpoint " + quoted(path) + ": cannot read (a directory?)");
  }
  return decode_safetensors(bytes, quoted(path), require_checksum);
}

}  // namespace vdnn::models
