// Writes files in the CIFAR-10 binary format (3073-byte records: label, then 3x32x32 pixels CHW)
// for the dataset, loader, trainer and CLI tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace vdnn::testing {

inline constexpr int kCifarImageBytes = 3 * 32 * 32;

/// Writes `records` records to `path`: record r has label label_of(r) and pixel j (CHW index)
/// equal to pixel_of(r, j).
template <typename LabelOf, typename PixelOf>
void write_cifar_file(const std::filesystem::path& path, int records, LabelOf label_of,
                      PixelOf pixel_of) {
  std::ofstream out(path, std::ios::binary);
  std::vector<char> record(1 + kCifarImageBytes);
  for (int r = 0; r < records; ++r) {
    record[0] = static_cast<char>(static_cast<std::uint8_t>(label_of(r)));
    for (int j = 0; j < kCifarImageBytes; ++j) {
      record[static_cast<std::size_t>(1 + j)] =
          static_cast<char>(static_cast<std::uint8_t>(pixel_of(r, j)));
    }
    out.write(record.data(), static_cast<std::streamsize>(record.size()));
  }
}

/// Records labelled r % 10 whose pixels all equal the label.
inline void write_cifar_file(const std::filesystem::path& path, int records) {
  write_cifar_file(
      path, records, [](int r) { return r % 10; }, [](int r, int) { return r % 10; });
}

/// A CIFAR-10 directory: `train_files` data_batch_<k>.bin of `records` records each, and a
/// test_batch.bin of `test_records`, all labelled r % 10 with pixels from a hash of (file, r, j)
/// whose mean depends on the label, so a network can learn something.
inline void write_cifar_directory(const std::filesystem::path& dir, int train_files, int records,
                                  int test_records) {
  std::filesystem::create_directories(dir);
  auto pixels = [](int file) {
    return [file](int r, int j) {
      const auto h = static_cast<std::uint32_t>((file * 7919 + r) * 104729 + j) * 2654435761u;
      return static_cast<int>((h >> 24) % 128) + 12 * (r % 10);
    };
  };
  auto label = [](int r) { return r % 10; };
  for (int k = 1; k <= train_files; ++k) {
    write_cifar_file(dir / ("data_batch_" + std::to_string(k) + ".bin"), records, label, pixels(k));
  }
  write_cifar_file(dir / "test_batch.bin", test_records, label, pixels(0));
}

}  // namespace vdnn::testing
