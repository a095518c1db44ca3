// Safetensors: the file format of checkpoints (huggingface/safetensors), with a vdnn checksum in
// its metadata and an atomic write. See Note [Safetensors layout] in Safetensors.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/Error.hpp"

namespace vdnn::models {

/// A checkpoint file is malformed, corrupted, unreadable, unwritable, or does not match the
/// network. what() names the file and what is wrong.
class CheckpointError : public runtime::DataError {
 public:
  using DataError::DataError;
};

/// The element types of the format that vdnn knows (their names in the header: "F32", "I64"...).
enum class TensorDType : std::uint8_t { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };
std::size_t dtype_size(TensorDType dtype) noexcept;
const char* dtype_name(TensorDType dtype) noexcept;

/// "[64, 3, 7, 7]"; "[]" for a scalar (for messages).
std::string shape_string(const std::vector<std::int64_t>& shape);

/// One tensor: its raw little-endian bytes, data.size() == numel(shape) * dtype_size(dtype).
struct SafetensorsTensor {
  std::string name;
  TensorDType dtype = TensorDType::F32;
  std::vector<std::int64_t> shape;  // empty: a scalar
  std::vector<std::byte> data;
};

/// The contents of a file: tensors in data order and the string metadata ("__metadata__").
struct SafetensorsFile {
  std::vector<SafetensorsTensor> tensors;
  std::map<std::string, std::string> metadata;
};

/// The metadata key of the checksum (FNV-1a 64 as 16 hex digits) over the header without it
/// and the data section.
inline constexpr const char* kChecksumKey = "vdnn.checksum";
/// Largest header accepted on read (the reference implementation's cap).
inline constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t{100} << 20;

/// FNV-1a 64 of `bytes`, continuing from `hash` (start from the offset basis, the default).
std::uint64_t fnv1a64(const void* bytes, std::size_t size,
                      std::uint64_t hash = 0xcbf29ce484222325ULL) noexcept;

/// The whole file as bytes, metadata plus kChecksumKey (which `file` must not hold). Throws
/// CheckpointError on duplicate names or a tensor whose data does not match its shape and dtype.
std::vector<std::byte> encode_safetensors(const SafetensorsFile& file);

/// Parses and validates a whole file (`source` names it in errors): header length, JSON, dtypes,
/// shapes against offsets, offsets in range, contiguous and non-overlapping, and the checksum
/// when present. `require_checksum`: a file without one is refused (a foreign file has none).
/// Throws CheckpointError naming `source` and what is wrong.
SafetensorsFile decode_safetensors(const std::vector<std::byte>& bytes, const std::string& source,
                                   bool require_checksum);

/// Called after each chunk of an atomic write with the bytes written so far; an exception thrown
/// from it aborts the write like an I/O error (tests inject failures with it).
using WriteProgress = std::function<void(std::size_t bytes_written)>;

/// Writes `bytes` to `path` atomically: `<path>.tmp-<pid>`, fsync, rename over `path`, fsync of
/// the directory. On failure the temp file is removed, `path` is left as it was, and
/// CheckpointError is thrown (or what `progress` threw).
void write_file_atomically(const std::filesystem::path& path, const std::vector<std::byte>& bytes,
                           const WriteProgress& progress = {});

/// encode_safetensors, then write_file_atomically. Throws CheckpointError.
void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file,
                       const WriteProgress& progress = {});

/// Reads and decode_safetensors a file. Throws CheckpointError (also when it cannot be read).
SafetensorsFile read_safetensors(const std::filesystem::path& path, bool require_checksum);

}  // namespace vdnn::models
