// ClassIndex: classes.txt written and read back, its malformed variants, and the check of the
// network's number of classes.
#include "models/data/image/ClassIndex.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/data/image/TarBytes.hpp"
#include "models/train/SafetensorsBytes.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

using Names = std::vector<std::string>;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

class ClassIndexTest : public ::testing::Test {
 protected:
  std::string path() const { return (dir_.path() / kClassIndexFileName).string(); }

  // The DataError that reading a class index holding `text` throws; checks that it names the file.
  std::string read_error(const std::string& text) {
    testing::write_file(path(), text);
    try {
      read_class_index(path());
    } catch (const runtime::DataError& e) {
      EXPECT_CONTAINS(e.what(), "class index " + path() + ": ");
      return e.what();
    }
    ADD_FAILURE() << "expected DataError";
    return {};
  }

  testing::TempDir dir_{"class-index-test"};
};

TEST_F(ClassIndexTest, WrittenOnePerLineAndReadBack) {
  const Names classes{"n01440764", "goldfish", "great white shark", "Ümlaut"};
  write_class_index(path(), classes);
  const std::vector<std::byte> bytes = testing::read_bytes(path());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
            "n01440764\ngoldfish\ngreat white shark\nÜmlaut\n");
  EXPECT_EQ(read_class_index(path()), classes);
  EXPECT_EQ(dir_.entries(), Names{"classes.txt"});  // no temporary file left
  write_class_index(path(), Names{"only"});         // replaces the file
  EXPECT_EQ(read_class_index(path()), Names{"only"});
}

TEST_F(ClassIndexTest, CrLfAndAMissingLastNewlineAreRead) {
  testing::write_file(path(), "cat\r\ndog\r\neel");
  EXPECT_EQ(read_class_index(path()), (Names{"cat", "dog", "eel"}));
}

TEST_F(ClassIndexTest, MalformedFilesAreErrorsNamingTheLine) {
  EXPECT_CONTAINS(read_error("cat\n\ndog\n"), "line 2 is empty");
  EXPECT_CONTAINS(read_error("cat\ndog\ncat\n"), "line 3 repeats the class \"cat\" of line 1");
  EXPECT_CONTAINS(read_error(""), "empty; expected one class name per line");
  EXPECT_CONTAINS(read_error("\n"), "line 1 is empty");
}

TEST_F(ClassIndexTest, MissingFileIsAnError) {
  try {
    read_class_index(path());
    ADD_FAILURE() << "expected DataError";
  } catch (const runtime::DataError& e) {
    EXPECT_CONTAINS(e.what(), "class index " + path() + ": cannot be read");
  }
}

TEST_F(ClassIndexTest, NamesThatCannotBeLinesAreRefused) {
  EXPECT_THROW(write_class_index(path(), Names{}), runtime::InvalidArgument);
  EXPECT_THROW(write_class_index(path(), Names{"a", ""}), runtime::InvalidArgument);
  EXPECT_THROW(write_class_index(path(), Names{"a\nb"}), runtime::InvalidArgument);
  EXPECT_THROW(write_class_index(path(), Names{"a\r"}), runtime::InvalidArgument);
  EXPECT_TRUE(dir_.entries().empty());
}

TEST(CheckNumClassesTest, EqualCountsPass) {
  EXPECT_NO_THROW(check_num_classes(Names{"a", "b"}, 2, "imagefolder:/data"));
}

TEST(CheckNumClassesTest, DifferentCountsSayBothAndWhere) {
  try {
    check_num_classes(Names(100, "c"), 1000, "imagefolder:/data/train");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const runtime::InvalidArgument& e) {
    EXPECT_CONTAINS(e.what(), "imagefolder:/data/train has 100 classes");
    EXPECT_CONTAINS(e.what(), "the network has 1000 outputs (its num_classes)");
  }
}

}  // namespace
}  // namespace vdnn::models
