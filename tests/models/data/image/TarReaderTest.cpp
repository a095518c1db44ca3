// TarReader on archives written byte by byte: ustar, GNU long names, pax headers, skipped entry
// types, member reads from several threads, and every hostile or damaged header.
#include "models/data/image/TarReader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "models/data/image/TarBytes.hpp"
#include "models/train/SafetensorsBytes.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

using testing::TarBuilder;
using testing::TarHeader;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

class TarReaderTest : public ::testing::Test {
 protected:
  // Writes `bytes` as a tar file of the test's directory.
  std::string write(const std::string& bytes, const std::string& name = "test.tar") {
    const std::string path = (dir_.path() / name).string();
    testing::write_file(path, bytes);
    return path;
  }

  static TarIndex index(const std::string& path) { return index_tar(TarFile(path)); }

  static std::string member(const std::string& path, const TarEntry& entry) {
    std::vector<std::uint8_t> bytes;
    read_member(TarFile(path), entry, bytes);
    return std::string(bytes.begin(), bytes.end());
  }

  // The DataError that indexing `bytes` throws; checks that it names the file.
  std::string index_error(const std::string& bytes) {
    const std::string path = write(bytes);
    try {
      index(path);
    } catch (const runtime::DataError& e) {
      EXPECT_CONTAINS(e.what(), "tar:" + path);
      return e.what();
    }
    ADD_FAILURE() << "expected DataError";
    return {};
  }

  testing::TempDir dir_{"tar-reader-test"};
};

TEST_F(TarReaderTest, UstarMembersAreIndexedAndRead) {
  const std::string path = write(TarBuilder()
                                     .file("a.jpg", "JPEGDATA")
                                     .file("x.jpg", "", '0', "dir/sub")
                                     .file("b.cls", std::string(700, 'z'))
                                     .end()
                                     .bytes());
  const TarIndex tar = index(path);
  ASSERT_EQ(tar.entries.size(), 3u);
  EXPECT_EQ(tar.skipped, 0);
  EXPECT_EQ(tar.entries[0].name, "a.jpg");
  EXPECT_EQ(tar.entries[0].offset, 512);
  EXPECT_EQ(tar.entries[0].size, 8);
  EXPECT_EQ(tar.entries[1].name, "dir/sub/x.jpg");  // ustar prefix + name
  EXPECT_EQ(tar.entries[1].offset, 1536);
  EXPECT_EQ(tar.entries[1].size, 0);
  EXPECT_EQ(tar.entries[2].name, "b.cls");
  EXPECT_EQ(tar.entries[2].offset, 2048);
  EXPECT_EQ(member(path, tar.entries[0]), "JPEGDATA");
  EXPECT_EQ(member(path, tar.entries[1]), "");
  EXPECT_EQ(member(path, tar.entries[2]), std::string(700, 'z'));
}

TEST_F(TarReaderTest, GnuLongNamesAndPaxPathsOverrideTheHeaderName) {
  const std::string long_name = std::string(150, 'd') + "/" + std::string(120, 'f') + ".jpg";
  const std::string pax_name = "pax/" + std::string(200, 'p') + ".png";
  const std::string path = write(
      TarBuilder()
          .long_name_file(long_name, "long")
          .pax_file(testing::pax_record("path", pax_name) + testing::pax_record("mtime", "1.5"),
                    "short.png", "pax")
          .file("after.jpg", "plain")
          .end()
          .bytes());
  const TarIndex tar = index(path);
  ASSERT_EQ(tar.entries.size(), 3u);
  EXPECT_EQ(tar.entries[0].name, long_name);
  EXPECT_EQ(member(path, tar.entries[0]), "long");
  EXPECT_EQ(tar.entries[1].name, pax_name);
  EXPECT_EQ(member(path, tar.entries[1]), "pax");
  EXPECT_EQ(tar.entries[2].name, "after.jpg");  // overrides apply to one entry only
}

TEST_F(TarReaderTest, PaxSizeOverridesTheHeaderSize) {
  TarBuilder tar;
  const std::string records = testing::pax_record("size", "600");
  tar.raw_header(TarHeader("PaxHeaders/big", static_cast<std::int64_t>(records.size()), 'x'))
      .raw(testing::padded(records))
      .raw_header(TarHeader("big.jpg", 0))
      .raw(testing::padded(std::string(600, 'b')))
      .file("next.jpg", "n")
      .end();
  const std::string path = write(tar.bytes());
  const TarIndex found = index(path);
  ASSERT_EQ(found.entries.size(), 2u);
  EXPECT_EQ(found.entries[0].size, 600);
  EXPECT_EQ(member(path, found.entries[1]), "n");
}

TEST_F(TarReaderTest, GlobalPaxHeadersAreIgnored) {
  const std::string records = testing::pax_record("path", "global.jpg");
  TarBuilder tar;
  tar.raw_header(TarHeader("pax_global_header", static_cast<std::int64_t>(records.size()), 'g'))
      .raw(testing::padded(records))
      .file("own.jpg", "o")
      .end();
  const TarIndex found = index(write(tar.bytes()));
  ASSERT_EQ(found.entries.size(), 1u);
  EXPECT_EQ(found.entries[0].name, "own.jpg");
}

TEST_F(TarReaderTest, DirectoriesAreSkippedLinksAndDevicesCounted) {
  TarBuilder tar;
  tar.file("dir/", "", '5')
      .file("dir/a.jpg", "a")
      .raw_header(TarHeader("dir/link.jpg", 0, '2'))
      .raw_header(TarHeader("dir/hard.jpg", 0, '1'))
      .raw_header(TarHeader("dev", 0, '3'))
      .raw_header(TarHeader("fifo", 0, '6'))
      .file("sparse.jpg", "s", 'S')
      .file("contiguous.jpg", "c", '7')
      .file("old.jpg", "o", '\0')
      .end();
  const TarIndex found = index(write(tar.bytes()));
  ASSERT_EQ(found.entries.size(), 3u);
  EXPECT_EQ(found.entries[0].name, "dir/a.jpg");
  EXPECT_EQ(found.entries[1].name, "contiguous.jpg");
  EXPECT_EQ(found.entries[2].name, "old.jpg");
  EXPECT_EQ(found.skipped, 5);
}

TEST_F(TarReaderTest, LinksHaveNoDataWhateverTheirSizeField) {
  TarBuilder tar;
  tar.raw_header(TarHeader("link.jpg", 4096, '2')).file("real.jpg", "r").end();
  const TarIndex found = index(write(tar.bytes()));
  ASSERT_EQ(found.entries.size(), 1u);
  EXPECT_EQ(found.entries[0].offset, 1024);
}

TEST_F(TarReaderTest, ArchiveEndsAtAZeroBlockOrAtTheEndOfTheFile) {
  // No end marker at all: the end of the file on a header boundary.
  EXPECT_EQ(index(write(TarBuilder().file("a.jpg", "a").bytes())).entries.size(), 1u);
  // One zero block, then bytes that are no header: the archive ended at the zero block.
  TarBuilder lone;
  lone.file("a.jpg", "a").raw(std::string(512, '\0')).raw(std::string(512, 'x'));
  EXPECT_EQ(index(write(lone.bytes())).entries.size(), 1u);
  // Padding of the last member cut short: its data is whole.
  std::string cut = TarBuilder().file("a.jpg", "abc").bytes();
  cut.resize(512 + 3);
  EXPECT_EQ(index(write(cut)).entries.size(), 1u);
  EXPECT_TRUE(index(write("")).entries.empty());
}

TEST_F(TarReaderTest, GnuBase256SizesAreRead) {
  TarHeader header("b256.jpg", 0);
  header.size_field = std::string("\x80\0\0\0\0\0\0\0\0\0\x02\x58", 12);  // 600
  TarBuilder tar;
  tar.raw_header(header).raw(testing::padded(std::string(600, 'q'))).end();
  const TarIndex found = index(write(tar.bytes()));
  ASSERT_EQ(found.entries.size(), 1u);
  EXPECT_EQ(found.entries[0].size, 600);
}

TEST_F(TarReaderTest, DotSlashNamesAreKeptAsWritten) {
  const TarIndex found = index(write(TarBuilder().file("./a.jpg", "a").end().bytes()));
  ASSERT_EQ(found.entries.size(), 1u);
  EXPECT_EQ(found.entries[0].name, "./a.jpg");
}

TEST_F(TarReaderTest, ThreadsReadOneTarFileAtOnce) {
  TarBuilder builder;
  constexpr int kMembers = 64;
  for (int m = 0; m < kMembers; ++m) {
    builder.file("m" + std::to_string(m) + ".bin", std::string(100 + 37 * m, static_cast<char>(m)));
  }
  const std::string path = write(builder.end().bytes());
  const TarFile file(path);
  const TarIndex tar = index_tar(file);
  ASSERT_EQ(tar.entries.size(), static_cast<std::size_t>(kMembers));
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::uint8_t> bytes;
      for (int round = 0; round < 20; ++round) {
        for (int m = (t + round) % kMembers, k = 0; k < kMembers; ++k, m = (m + 1) % kMembers) {
          read_member(file, tar.entries[static_cast<std::size_t>(m)], bytes);
          const bool ok = bytes.size() == static_cast<std::size_t>(100 + 37 * m) &&
                          bytes.front() == m && bytes.back() == m;
          wrong[static_cast<std::size_t>(t)] += ok ? 0 : 1;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

TEST_F(TarReaderTest, TarFileIsMovable) {
  const std::string path = write(TarBuilder().file("a.jpg", "a").end().bytes());
  TarFile first(path);
  const int fd = first.fd();
  TarFile second(std::move(first));
  EXPECT_EQ(first.fd(), -1);  // NOLINT(bugprone-use-after-move): the moved-from state is the test
  EXPECT_EQ(second.fd(), fd);
  EXPECT_EQ(second.size(), 512 * 4);
  EXPECT_EQ(member(path, index_tar(second).entries.at(0)), "a");
}

TEST_F(TarReaderTest, PathsOutsideTheArchiveAreRefused) {
  for (const std::string name : {"../evil.jpg", "a/../../evil.jpg", "a/..", ".."}) {
    const std::string message =
        index_error(TarBuilder().file("ok.jpg", "o").file(name, "e").bytes());
    EXPECT_CONTAINS(message, "entry \"" + name + "\" (header at byte 1024)");
    EXPECT_CONTAINS(message, "climbs out of the archive");
  }
  EXPECT_CONTAINS(index_error(TarBuilder().file("/etc/evil.jpg", "e").bytes()), "absolute path");
  EXPECT_CONTAINS(
      index_error(TarBuilder().long_name_file("/" + std::string(120, 'a'), "e").bytes()),
      "absolute path");
  EXPECT_CONTAINS(
      index_error(TarBuilder()
                      .pax_file(testing::pax_record("path", "x/../../y.jpg"), "y.jpg", "e")
                      .bytes()),
      "entry \"x/../../y.jpg\"");
  // Links pointing outside are never followed, but their names are checked all the same.
  EXPECT_CONTAINS(index_error(TarBuilder().raw_header(TarHeader("../link", 0, '2')).bytes()),
                  "climbs out");
  EXPECT_CONTAINS(index_error(TarBuilder().file("", "x").bytes()), "empty name");
}

TEST_F(TarReaderTest, BadChecksumIsRefused) {
  std::string bytes = TarBuilder().file("a.jpg", "a").file("b.jpg", "b").bytes();
  bytes[1024 + 1] = 'X';  // the second header's name, after sealing
  const std::string message = index_error(bytes);
  EXPECT_CONTAINS(message, "entry \"bXjpg\" (header at byte 1024)");
  EXPECT_CONTAINS(message, "bad header checksum");
  // Bytes that are no tar at all.
  EXPECT_CONTAINS(index_error(std::string(2048, 'x')), "bad header checksum");
}

TEST_F(TarReaderTest, TruncatedMembersAndHeadersAreRefused) {
  std::string member_cut =
      TarBuilder().file("a.jpg", "a").file("b.jpg", std::string(900, 'b')).bytes();
  member_cut.resize(1024 + 512 + 400);
  const std::string message = index_error(member_cut);
  EXPECT_CONTAINS(message, "entry \"b.jpg\" (header at byte 1024)");
  EXPECT_CONTAINS(message, "runs past the end of the file");
  std::string header_cut = TarBuilder().file("a.jpg", "a").file("b.jpg", "b").bytes();
  header_cut.resize(1024 + 300);
  EXPECT_CONTAINS(index_error(header_cut), "ends inside the header at byte 1024 (300 of 512");
}

TEST_F(TarReaderTest, BadSizeFieldsAreRefused) {
  for (const std::string& field :
       {std::string("0000012x45 \0", 12), std::string("9999999999 \0", 12),
        std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfe", 12)}) {
    TarHeader header("bad.jpg", 0);
    header.size_field = field;
    const std::string message = index_error(TarBuilder().raw_header(header).end().bytes());
    EXPECT_CONTAINS(message, "entry \"bad.jpg\" (header at byte 0)");
    EXPECT_CONTAINS(message, "neither octal nor base-256");
  }
}

TEST_F(TarReaderTest, HugeSizesAreRefusedWithoutAllocating) {
  TarHeader octal_huge("huge.jpg", 0);
  octal_huge.size_field = "77777777777";  // 8 GiB
  EXPECT_CONTAINS(index_error(TarBuilder().raw_header(octal_huge).end().bytes()),
                  "data of 8589934591 bytes runs past the end of the file");
  TarHeader base256_huge("huge.jpg", 0);
  base256_huge.size_field = std::string("\x80\0\0\0\x7f\xff\xff\xff\xff\xff\xff\xff", 12);
  EXPECT_CONTAINS(index_error(TarBuilder().raw_header(base256_huge).end().bytes()),
                  "runs past the end of the file");
  TarHeader base256_overflow("huge.jpg", 0);
  base256_overflow.size_field = std::string("\x80\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 12);
  EXPECT_CONTAINS(index_error(TarBuilder().raw_header(base256_overflow).end().bytes()),
                  "neither octal nor base-256");
  // Long-name and pax headers are read into memory: more than 1 MiB is refused before reading.
  TarHeader long_name("././@LongLink", std::int64_t{1} << 32, 'L');
  EXPECT_CONTAINS(index_error(TarBuilder().raw_header(long_name).end().bytes()),
                  "(at most 1 MiB accepted)");
  TarHeader pax("PaxHeaders/x", 2 << 20, 'x');
  EXPECT_CONTAINS(index_error(TarBuilder().raw_header(pax).end().bytes()),
                  "a pax header of 2097152 bytes");
}

TEST_F(TarReaderTest, BadPaxRecordsAreRefused) {
  for (const std::string& records :
       {std::string("99 path=x.jpg\n"), std::string("abc path=x.jpg\n"),
        std::string("3 path=x.jpg\n"), std::string("14 path=x.jpg!"), std::string("11 pathxxx\n"),
        std::string("999999999999999999999 path=x\n")}) {
    const std::string message =
        index_error(TarBuilder().pax_file(records, "x.jpg", "x").end().bytes());
    EXPECT_CONTAINS(message, "(header at byte 0)");
    EXPECT_CONTAINS(message, "pax record at byte 0 of the extended header has a bad length");
  }
  EXPECT_CONTAINS(
      index_error(TarBuilder().pax_file(testing::pax_record("size", "12ab"), "x.jpg", "x").bytes()),
      "pax size \"12ab\" is not a decimal");
}

TEST_F(TarReaderTest, MissingFilesAndDirectoriesAreRefused) {
  const std::string missing = (dir_.path() / "missing.tar").string();
  try {
    TarFile file(missing);
    ADD_FAILURE() << "expected DataError";
  } catch (const runtime::DataError& e) {
    EXPECT_CONTAINS(e.what(), "tar:" + missing + ": cannot be opened");
  }
  EXPECT_THROW(TarFile(dir_.path().string()), runtime::DataError);
}

TEST_F(TarReaderTest, ReadingPastTheEndOrTooMuchIsRefused) {
  const std::string path = write(TarBuilder().file("a.jpg", "a").end().bytes());
  const TarFile file(path);
  std::vector<std::uint8_t> bytes;
  try {
    read_member(file, TarEntry{"gone.jpg", 2000, 100}, bytes);
    ADD_FAILURE() << "expected DataError";
  } catch (const runtime::DataError& e) {
    EXPECT_CONTAINS(e.what(), "tar:" + path + ": entry \"gone.jpg\"");
    EXPECT_CONTAINS(e.what(), "lies past the end of the file");
  }
  EXPECT_THROW(read_member(file, TarEntry{"huge.jpg", 0, kMaxTarMemberBytes + 1}, bytes),
               runtime::DataError);
}

}  // namespace
}  // namespace vdnn::models
