// DiskCache: values come back as stored; every damaged or foreign file is a miss with exactly one
// warning; concurrent writers (threads and processes) leave one whole file and no temporaries.
#include "runtime/DiskCache.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <functional>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/Error.hpp"

namespace vdnn::runtime {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() /
                       ("vdnn-test-disk-cache-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

// A cache whose warnings are collected.
struct Collected {
  explicit Collected(const fs::path& dir, std::string fingerprint = "fp")
      : cache(dir, std::move(fingerprint),
              [this](const std::string& m) { warnings.push_back(m); }) {}
  std::vector<std::string> warnings;
  DiskCache cache;
};

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_all(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) files.push_back(e.path());
  return files;
}

// Expects a miss with exactly one warning naming the file and `reason`.
void expect_ignored(Collected& c, const std::string& key, const std::string& reason) {
  const fs::path file = c.cache.file("conv", key);
  c.warnings.clear();
  EXPECT_FALSE(c.cache.load("conv", key).has_value());
  ASSERT_EQ(c.warnings.size(), 1u);
  const std::string& w = c.warnings.front();
  EXPECT_EQ(w.rfind("ignoring cache file " + file.string() + ": ", 0), 0u) << w;
  EXPECT_NE(w.find(reason), std::string::npos) << w;
}

TEST(DiskCache, StoresAndLoadsValuesPerKindAndKey) {
  const fs::path dir = fresh_dir("round-trip") / "nested";
  Collected c(dir);
  EXPECT_TRUE(fs::is_directory(dir));
  const std::string value = "line one\nline \"two\"\t\\ and a long one: " + std::string(1000, 'x');
  c.cache.store("conv", "conv2d nchw [4, 3, 32, 32] 16", value);
  c.cache.store("costs", "conv2d nchw [4, 3, 32, 32] 16", "other kind");
  c.cache.store("conv", "another key", "");
  EXPECT_EQ(c.cache.load("conv", "conv2d nchw [4, 3, 32, 32] 16"), value);
  EXPECT_EQ(c.cache.load("costs", "conv2d nchw [4, 3, 32, 32] 16"), "other kind");
  EXPECT_EQ(c.cache.load("conv", "another key"), "");
  c.cache.store("conv", "another key", "replaced");
  EXPECT_EQ(c.cache.load("conv", "another key"), "replaced");
  EXPECT_TRUE(c.warnings.empty());
  // One file per entry, named <kind>-<16 hex digits>.json, holding the documented fields.
  const fs::path file = c.cache.file("conv", "another key");
  EXPECT_EQ(file.parent_path(), dir);
  EXPECT_EQ(file.filename().string().size(), std::string("conv-0123456789abcdef.json").size());
  EXPECT_EQ(files_in(dir).size(), 3u);
  const Json j = Json::parse(read_all(file));
  EXPECT_EQ(j.at("format"), kDiskCacheFormat);
  EXPECT_EQ(j.at("kind"), "conv");
  EXPECT_EQ(j.at("fingerprint"), "fp");
  EXPECT_EQ(j.at("key"), "another key");
  EXPECT_EQ(j.at("checksum"), cache_checksum("replaced"));
  EXPECT_EQ(j.at("value"), "replaced");
  EXPECT_THROW(c.cache.file("Conv/..", "k"), InvalidArgument);
}

TEST(DiskCache, AMissingFileIsAMissWithoutWarning) {
  Collected c(fresh_dir("missing"));
  EXPECT_FALSE(c.cache.load("conv", "never stored").has_value());
  EXPECT_TRUE(c.warnings.empty());
}

TEST(DiskCache, AnotherFingerprintIsAnotherFile) {
  const fs::path dir = fresh_dir("fingerprint");
  Collected a(dir, "device A");
  Collected b(dir, "device B");
  a.cache.store("conv", "k", "from A");
  EXPECT_NE(a.cache.file("conv", "k"), b.cache.file("conv", "k"));
  EXPECT_FALSE(b.cache.load("conv", "k").has_value());
  EXPECT_TRUE(b.warnings.empty());
  EXPECT_EQ(a.cache.load("conv", "k"), "from A");
}

TEST(DiskCache, GarbageBytesAreIgnoredWithOneWarning) {
  Collected c(fresh_dir("garbage"));
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage.push_back(static_cast<char>((i * 7919) % 256));
  write_all(c.cache.file("conv", "k"), garbage);
  expect_ignored(c, "k", "not valid JSON");
}

TEST(DiskCache, ATruncatedFileIsIgnoredWithOneWarning) {
  Collected c(fresh_dir("truncated"));
  c.cache.store("conv", "k", std::string(300, 'v'));
  const fs::path file = c.cache.file("conv", "k");
  const std::string whole = read_all(file);
  write_all(file, whole.substr(0, whole.size() / 2));
  expect_ignored(c, "k", "not valid JSON");
}

// Rewrites the file of `key` with `edit` applied to its JSON.
template <typename Edit>
void edit_file(DiskCache& cache, const std::string& key, Edit edit) {
  const fs::path file = cache.file("conv", key);
  Json j = Json::parse(read_all(file));
  edit(j);
  write_all(file, j.dump());
}

// A whole file with one field edited: ignored, with one warning saying why.
struct FieldEdit {
  const char* name;
  std::function<void(Json&)> edit;
  std::string why;
};

class DiskCacheEdited : public ::testing::TestWithParam<FieldEdit> {};

TEST_P(DiskCacheEdited, IsIgnoredWithOneWarning) {
  Collected c(fresh_dir(GetParam().name));
  c.cache.store("conv", "k", "forward 1 2 3");
  edit_file(c.cache, "k", GetParam().edit);
  expect_ignored(c, "k", GetParam().why);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, DiskCacheEdited,
    ::testing::Values(FieldEdit{"ForeignFingerprint",
                                [](Json& j) { j["fingerprint"] = "another device"; },
                                "fingerprint"},
                      FieldEdit{"ForeignFormat",
                                [](Json& j) { j["format"] = kDiskCacheFormat + 1; },
                                "format " + std::to_string(kDiskCacheFormat + 1)},
                      FieldEdit{"ChecksumMismatch", [](Json& j) { j["value"] = "forward 1 2 4"; },
                                "checksum mismatch"},
                      FieldEdit{"MissingField", [](Json& j) { j.erase("checksum"); }, "missing"}),
    [](const ::testing::TestParamInfo<FieldEdit>& info) { return info.param.name; });

TEST(DiskCache, AnotherKeyInTheFileIsIgnoredWithOneWarning) {
  // A colliding file name: the file of key "a" holds key "b", whole and with a valid checksum.
  Collected c(fresh_dir("other-key"));
  c.cache.store("conv", "b", "value of b");
  fs::rename(c.cache.file("conv", "b"), c.cache.file("conv", "a"));
  expect_ignored(c, "a", "another key");
}

TEST(DiskCache, AnotherKindInTheFileIsIgnoredWithOneWarning) {
  Collected c(fresh_dir("other-kind"));
  c.cache.store("costs", "k", "v");
  fs::rename(c.cache.file("costs", "k"), c.cache.file("conv", "k"));
  expect_ignored(c, "k", "kind");
}

TEST(DiskCache, AFileTooLargeIsIgnoredUnread) {
  Collected c(fresh_dir("huge"));
  const fs::path file = c.cache.file("conv", "k");
  { std::ofstream(file, std::ios::binary) << "{"; }
  fs::resize_file(file, kDiskCacheMaxFileBytes + 1);  // sparse: no disk space used
  expect_ignored(c, "k", "larger than 64 MiB");
}

TEST(DiskCache, AFailedWriteIsAWarningAndLeavesNoFile) {
  const fs::path dir = fresh_dir("failed-write");
  Collected c(dir);
  // The final name is taken by a directory: the rename fails.
  fs::create_directories(c.cache.file("conv", "k") / "occupied");
  EXPECT_NO_THROW(c.cache.store("conv", "k", "v"));
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings.front().find("cannot write cache file"), std::string::npos);
  EXPECT_EQ(files_in(dir).size(), 1u);  // the directory only, no temporary file
  // And where the directory is gone, too.
  fs::remove_all(dir);
  c.warnings.clear();
  EXPECT_NO_THROW(c.cache.store("conv", "k", "v"));
  EXPECT_EQ(c.warnings.size(), 1u);
}

TEST(DiskCache, AnUncreatableDirectoryThrowsNamingIt) {
  const fs::path dir = fresh_dir("not-a-dir");
  fs::create_directories(dir);
  write_all(dir / "file", "x");
  try {
    DiskCache cache(dir / "file" / "sub", "fp", {});
    FAIL() << "expected runtime::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "file" / "sub").string()), std::string::npos)
        << e.what();
  }
}

TEST(DiskCache, ThreadsStoringAndLoadingAtOnceSeeWholeValues) {
  const fs::path dir = fresh_dir("threads");
  Collected c(dir);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&c, t] {
      for (int i = 0; i < 100; ++i) {
        c.cache.store("conv", "shared", std::string(1000, static_cast<char>('a' + t)));
        c.cache.store("conv", "own " + std::to_string(t), std::to_string(i));
        const std::optional<std::string> v = c.cache.load("conv", "shared");
        if (!v || v->size() != 1000 || v->find_first_not_of(v->front()) != std::string::npos) {
          ADD_FAILURE() << "torn value";
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(c.warnings.empty());
  for (int t = 0; t < 4; ++t) EXPECT_EQ(c.cache.load("conv", "own " + std::to_string(t)), "99");
  EXPECT_EQ(files_in(dir).size(), 5u);
}

TEST(DiskCache, ProcessesStoringOneKeyAtOnceLeaveAWholeFile) {
  const fs::path dir = fresh_dir("processes");
  const auto value_of = [](int child, int i) {
    return "child " + std::to_string(child) + " store " + std::to_string(i) + " " +
           std::string(static_cast<std::size_t>(100 + 37 * i % 5000),
                       static_cast<char>('a' + child));
  };
  constexpr int kChildren = 3;
  constexpr int kStores = 300;
  std::vector<pid_t> children;
  for (int child = 0; child < kChildren; ++child) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Only async-signal-safe exits from here: no gtest assertion, no exit handlers.
      int failures = 0;
      try {
        DiskCache cache(dir, "fp", [&failures](const std::string&) { ++failures; });
        for (int i = 0; i < kStores; ++i) cache.store("conv", "shared", value_of(child, i));
      } catch (...) {
        ++failures;
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  // Meanwhile the parent reads: a miss before the first rename, else always a whole value.
  std::set<std::string> written;
  for (int child = 0; child < kChildren; ++child) {
    for (int i = 0; i < kStores; ++i) written.insert(value_of(child, i));
  }
  fs::create_directories(dir);
  Collected reader(dir);
  for (int i = 0; i < 2000; ++i) {
    if (const std::optional<std::string> v = reader.cache.load("conv", "shared")) {
      EXPECT_EQ(written.count(*v), 1u);
    }
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a child's store warned";
  }
  EXPECT_EQ(reader.warnings.size(), 0u);
  const std::optional<std::string> last = reader.cache.load("conv", "shared");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(written.count(*last), 1u);
  // The final file only: every temporary file was renamed away.
  const std::vector<fs::path> files = files_in(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files.front(), reader.cache.file("conv", "shared"));
}

TEST(DiskCache, DefaultDirectoryFollowsXdgThenHome) {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const char* old_home = std::getenv("HOME");
  const std::string saved_xdg = old_xdg ? old_xdg : "";
  const std::string saved_home = old_home ? old_home : "";
  ::setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(default_cache_dir(), fs::path("/xdg/cache/vdnn"));
  ::setenv("XDG_CACHE_HOME", "relative/cache", 1);  // not absolute: ignored
  EXPECT_EQ(default_cache_dir(), fs::path("/home/someone/.cache/vdnn"));
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(default_cache_dir(), fs::path("/home/someone/.cache/vdnn"));
  ::unsetenv("HOME");
  EXPECT_TRUE(default_cache_dir().empty());
  if (old_xdg) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (old_home) ::setenv("HOME", saved_home.c_str(), 1);
}

}  // namespace
}  // namespace vdnn::runtime
