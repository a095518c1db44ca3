// Writes tar archives byte by byte, independently of models/data/image/TarReader.cpp: ustar
// headers, GNU long names ('L'), pax extended headers ('x'), and the damaged or hostile variants
// the reader tests need.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace vdnn::testing {

/// One 512-byte tar header. `size_field`, when not empty, is written into the size field instead
/// of `size` in octal (for bad size fields).
struct TarHeader {
  TarHeader(std::string member_name, std::int64_t member_size, char type_flag = '0')
      : name(std::move(member_name)), size(member_size), type(type_flag) {}
  std::string name;
  std::int64_t size = 0;
  char type = '0';
  std::string prefix;      // ustar prefix
  std::string size_field;  // raw bytes for the 12-byte size field
  bool gnu_magic = false;  // "ustar  \0" (GNU) instead of "ustar\0" "00" (POSIX)
};

inline void put_field(std::string& block, std::size_t offset, std::size_t length,
                      const std::string& value) {
  block.replace(offset, std::min(length, value.size()), value.substr(0, length));
}

inline std::string octal(std::int64_t value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%0*llo", digits, static_cast<unsigned long long>(value));
  return text;
}

/// Writes the header's checksum field (bytes 148..155) from the other 504 bytes.
inline void seal(std::string& block) {
  put_field(block, 148, 8, "        ");
  std::int64_t sum = 0;
  for (const char c : block) sum += static_cast<unsigned char>(c);
  put_field(block, 148, 8, octal(sum, 6) + std::string(1, '\0') + " ");
}

/// A sealed header block.
inline std::string header_block(const TarHeader& header) {
  std::string block(512, '\0');
  put_field(block, 0, 100, header.name);
  put_field(block, 100, 8, octal(0644, 7));
  put_field(block, 108, 8, octal(0, 7));
  put_field(block, 116, 8, octal(0, 7));
  put_field(block, 124, 12, header.size_field.empty() ? octal(header.size, 11) : header.size_field);
  put_field(block, 136, 12, octal(0, 11));
  block[156] = header.type;
  const std::string posix_magic("ustar\00000", 8);  // "ustar", NUL (octal \000), version "00"
  put_field(block, 257, 8, header.gnu_magic ? std::string("ustar  \0", 8) : posix_magic);
  put_field(block, 345, 155, header.prefix);
  seal(block);
  return block;
}

/// `data` padded with zeros to a multiple of 512 bytes.
inline std::string padded(std::string data) {
  data.resize((data.size() + 511) / 512 * 512, '\0');
  return data;
}

/// A pax record "LENGTH key=value\n", LENGTH counting the whole record.
inline std::string pax_record(const std::string& key, const std::string& value) {
  const std::string body = " " + key + "=" + value + "\n";
  std::size_t length = body.size() + 1;
  while (std::to_string(length).size() + body.size() != length) ++length;
  return std::to_string(length) + body;
}

/// Appends archive pieces; bytes() is the archive so far.
class TarBuilder {
 public:
  /// A member with a ustar header (name split into prefix/name by the caller when needed).
  TarBuilder& file(const std::string& name, const std::string& data, char type = '0',
                   const std::string& prefix = "") {
    TarHeader header(name, static_cast<std::int64_t>(data.size()), type);
    header.prefix = prefix;
    bytes_ += header_block(header) + padded(data);
    return *this;
  }
  /// A GNU 'L' record carrying `long_name`, then the member under a truncated header name.
  TarBuilder& long_name_file(const std::string& long_name, const std::string& data) {
    TarHeader link("././@LongLink", static_cast<std::int64_t>(long_name.size() + 1), 'L');
    link.gnu_magic = true;
    bytes_ += header_block(link) + padded(long_name + '\0');
    return file(long_name.substr(0, 99), data);
  }
  /// A pax 'x' header holding `records` (already formatted), then the member.
  TarBuilder& pax_file(const std::string& records, const std::string& header_name,
                       const std::string& data) {
    raw_header(TarHeader("PaxHeaders/" + header_name.substr(0, 80),
                         static_cast<std::int64_t>(records.size()), 'x'));
    bytes_ += padded(records);
    return file(header_name, data);
  }
  TarBuilder& raw_header(const TarHeader& header) {
    bytes_ += header_block(header);
    return *this;
  }
  TarBuilder& raw(const std::string& bytes) {
    bytes_ += bytes;
    return *this;
  }
  /// The end-of-archive marker: two zero blocks.
  TarBuilder& end() {
    bytes_ += std::string(1024, '\0');
    return *this;
  }
  const std::string& bytes() const noexcept { return bytes_; }
  std::string& bytes() noexcept { return bytes_; }

 private:
  std::string bytes_;
};

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace vdnn::testing
