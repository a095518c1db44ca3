// WebDatasetIndex on shards written byte by byte: WebDataset's key rule, sample and shard order,
// the three label formats, and the bad samples and shards (errors, or skipped with skip_bad).
#include "models/data/image/WebDatasetIndex.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/data/image/TarBytes.hpp"
#include "models/train/SafetensorsBytes.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

using testing::TarBuilder;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

class WebDatasetIndexTest : public ::testing::Test {
 protected:
  // Writes `tar` as the shard `name`; returns its path.
  std::string shard(const std::string& name, TarBuilder& tar) {
    const std::string path = (dir_.path() / name).string();
    testing::write_file(path, tar.end().bytes());
    return path;
  }
  std::string pattern(const std::string& tail) const { return (dir_.path() / tail).string(); }

  // The DataError that indexing `pattern` throws; checks that it names `named`.
  static std::string index_error(const std::string& pattern, const std::string& named,
                                 const WebDatasetOptions& options = {}) {
    try {
      index_webdataset(pattern, options);
    } catch (const runtime::DataError& e) {
      EXPECT_CONTAINS(e.what(), named);
      return e.what();
    }
    ADD_FAILURE() << "expected DataError";
    return {};
  }

  // One shard holding one sample `members`; the DataError it gives, naming the shard and `key`.
  std::string sample_error(TarBuilder& members, const std::string& key) {
    const std::string path = shard("bad.tar", members);
    return index_error(path, "webdataset:" + path + ": sample \"" + key + "\": ");
  }

  // "shard label image-name" per sample.
  static std::vector<std::string> listed(const WebDatasetIndex& index) {
    std::vector<std::string> lines;
    for (const WebDatasetSample& s : index.samples) {
      lines.push_back(std::to_string(s.shard) + " " + std::to_string(s.label) + " " + s.image.name);
    }
    return lines;
  }

  testing::TempDir dir_{"webdataset-test"};
};

TEST_F(WebDatasetIndexTest, SamplesFollowShardThenMemberOrder) {
  TarBuilder first;
  first.file("b.jpg", "B").file("b.cls", "1").file("a.png", "A").file("a.txt", " 3\n");
  TarBuilder second;
  second.file("dir/c.cls", "0")
      .file("dir/c.JPEG", "C")
      .file("d.jpg", "D")
      .file("d.json", R"({"label": 2, "caption": "x"})")
      .file("e.jpg", "E")
      .file("e.json", "5");
  shard("shard-0.tar", first);
  shard("shard-1.tar", second);
  const WebDatasetIndex index = index_webdataset(pattern("shard-{0..1}.tar"));
  EXPECT_EQ(index.shards,
            (std::vector<std::string>{pattern("shard-0.tar"), pattern("shard-1.tar")}));
  EXPECT_EQ(listed(index), (std::vector<std::string>{"0 1 b.jpg", "0 3 a.png", "1 0 dir/c.JPEG",
                                                     "1 2 d.jpg", "1 5 e.jpg"}));
  EXPECT_EQ(index.classes, (std::vector<std::string>{"0", "1", "2", "3", "4", "5"}));
  EXPECT_EQ(index.ignored_members, 0);
  const TarEntry& image = index.samples[0].image;
  EXPECT_EQ(image.offset, 512);
  EXPECT_EQ(image.size, 1);
}

TEST_F(WebDatasetIndexTest, KeyIsUpToTheFirstDotOfTheLastComponent) {
  TarBuilder tar;
  tar.file("a.b/x.y.jpg", "image")  // key a.b/x, extension "y.jpg": no image
      .file("a.b/x.cls", "1")
      .file("a.b/x.jpg", "image")
      .file("__meta__", "ignored")
      .file("noextension", "ignored")
      .file("dir/.hidden", "ignored");
  shard("s.tar", tar);
  const WebDatasetIndex index = index_webdataset(pattern("s.tar"));
  EXPECT_EQ(listed(index), std::vector<std::string>{"0 1 a.b/x.jpg"});
  EXPECT_EQ(index.ignored_members, 4);  // x.y.jpg, and the three without a key
}

TEST_F(WebDatasetIndexTest, ImageAndLabelPreferences) {
  TarBuilder tar;
  tar.file("k.png", "P")
      .file("k.jpg", "J")
      .file("k.json", "7")
      .file("k.cls", "4")
      .file("k.txt", "5");
  shard("s.tar", tar);
  const WebDatasetIndex index = index_webdataset(pattern("s.tar"));
  EXPECT_EQ(listed(index), std::vector<std::string>{"0 4 k.jpg"});  // .jpg over .png, .cls first
  EXPECT_EQ(index.ignored_members, 3);
}

TEST_F(WebDatasetIndexTest, GivenClassNamesAreUsed) {
  TarBuilder tar;
  tar.file("k.jpg", "J").file("k.cls", "1");
  shard("s.tar", tar);
  WebDatasetOptions options;
  options.class_names = {"cat", "dog", "eel"};
  EXPECT_EQ(index_webdataset(pattern("s.tar"), options).classes, options.class_names);
  options.class_names = {"cat"};
  EXPECT_CONTAINS(index_error(pattern("s.tar"), "k.cls holds \"1\"", options),
                  "expected an integer, 0 .. 0 (the class names given)");
}

TEST_F(WebDatasetIndexTest, SampleWithoutImageOrLabelIsAnError) {
  TarBuilder no_image;
  no_image.file("k.cls", "1").file("k.txt", "caption");
  EXPECT_CONTAINS(sample_error(no_image, "k"),
                  "no image member (.jpg, .jpeg, .png); its members: k.cls, k.txt");
  TarBuilder no_label;
  no_label.file("k.jpg", "J");
  EXPECT_CONTAINS(sample_error(no_label, "k"), "no label member (.cls, .txt, .json)");
  // The same key again after another one is another sample, here without a label.
  TarBuilder split;
  split.file("k.jpg", "J")
      .file("k.cls", "1")
      .file("m.jpg", "M")
      .file("m.cls", "1")
      .file("k.png", "P");
  EXPECT_CONTAINS(sample_error(split, "k"), "no label member");
  TarBuilder twice;
  twice.file("k.jpg", "J").file("k.JPG", "J").file("k.cls", "1");
  EXPECT_CONTAINS(sample_error(twice, "k"), "two members with the extension \"jpg\"");
}

TEST_F(WebDatasetIndexTest, LabelsThatAreNoNonNegativeIntegerAreErrors) {
  for (const auto& [member, text] :
       std::vector<std::pair<std::string, std::string>>{{"k.cls", "abc"},
                                                        {"k.cls", "-1"},
                                                        {"k.cls", ""},
                                                        {"k.txt", "1 2"},
                                                        {"k.cls", "1e3"},
                                                        {"k.cls", "1000000"},
                                                        {"k.cls", "99999999999999999999999"},
                                                        {"k.json", "3.5"},
                                                        {"k.json", "-2"},
                                                        {"k.json", R"({"name": 3})"},
                                                        {"k.json", R"({"label": "3"})"},
                                                        {"k.json", "{not json"},
                                                        {"k.json", "18446744073709551615"}}) {
    TarBuilder tar;
    tar.file("k.jpg", "J").file(member, text);
    EXPECT_CONTAINS(sample_error(tar, "k"), member + " holds \"");
  }
}

TEST_F(WebDatasetIndexTest, JsonObjectsMayUseCls) {
  TarBuilder tar;
  tar.file("k.jpg", "J").file("k.json", R"({"cls": 9})");
  shard("s.tar", tar);
  EXPECT_EQ(listed(index_webdataset(pattern("s.tar"))), std::vector<std::string>{"0 9 k.jpg"});
}

TEST_F(WebDatasetIndexTest, OversizedLabelMemberIsNotRead) {
  TarBuilder tar;
  tar.file("k.jpg", "J").file("k.cls", std::string(kMaxLabelMemberBytes + 1, '1'));
  EXPECT_CONTAINS(sample_error(tar, "k"), "k.cls holds 65537 bytes, more than a label");
}

TEST_F(WebDatasetIndexTest, MissingAndCorruptShardsAreErrors) {
  TarBuilder good;
  good.file("k.jpg", "J").file("k.cls", "0");
  shard("s-0.tar", good);
  EXPECT_CONTAINS(index_error(pattern("s-{0..1}.tar"), "webdataset:" + pattern("s-1.tar")),
                  "no such shard");
  const std::string corrupt = shard("s-1.tar", good);
  std::string bytes = good.bytes();
  bytes[0] = 'X';  // after sealing: a bad checksum
  testing::write_file(corrupt, bytes);
  EXPECT_CONTAINS(index_error(pattern("s-{0..1}.tar"), "tar:" + corrupt), "bad header checksum");
}

TEST_F(WebDatasetIndexTest, SkipBadSkipsShardsAndSamplesAndCountsThem) {
  TarBuilder mixed;
  mixed.file("a.jpg", "A")
      .file("a.cls", "2")
      .file("b.jpg", "B")
      .file("c.jpg", "C")
      .file("c.cls", "x");
  shard("s-0.tar", mixed);
  WebDatasetOptions options;
  options.skip_bad = true;
  const WebDatasetIndex index = index_webdataset(pattern("s-{0..1}.tar"), options);
  EXPECT_EQ(listed(index), std::vector<std::string>{"0 2 a.jpg"});
  ASSERT_EQ(index.skipped.size(), 3u);
  EXPECT_CONTAINS(index.skipped[0], "sample \"b\": no label member");
  EXPECT_CONTAINS(index.skipped[1], "sample \"c\": c.cls holds \"x\"");
  EXPECT_CONTAINS(index.skipped[2], "webdataset:" + pattern("s-1.tar") + ": no such shard");
}

TEST_F(WebDatasetIndexTest, SourceWithoutSamplesIsAnErrorEvenWhenSkipping) {
  TarBuilder empty;
  shard("empty.tar", empty);
  EXPECT_CONTAINS(index_error(pattern("empty.tar"), "webdataset:" + pattern("empty.tar")),
                  "no samples in 1 shard(s)");
  TarBuilder bad;
  bad.file("k.jpg", "J");
  shard("bad.tar", bad);
  WebDatasetOptions options;
  options.skip_bad = true;
  EXPECT_CONTAINS(index_error(pattern("{bad,empty}.tar"), "no samples in 2 shard(s)", options),
                  "1 shards or samples skipped as bad");
}

TEST_F(WebDatasetIndexTest, BadPatternIsAnInvalidArgument) {
  EXPECT_THROW(index_webdataset(pattern("s-{0..1.tar")), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::models
