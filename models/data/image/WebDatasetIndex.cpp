// Indexes WebDataset shards: expands the pattern, indexes each tar, groups consecutive members by
// key and reads each sample's label member (the only member data read here).
#include "models/data/image/WebDatasetIndex.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "models/data/image/BracePattern.hpp"
#include "models/data/image/Printable.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

// In order of preference when a sample has several.
constexpr std::array<std::string_view, 3> kImageExtensions{"jpg", "jpeg", "png"};
constexpr std::array<std::string_view, 3> kLabelExtensions{"cls", "txt", "json"};
constexpr std::size_t kMaxLabelDigits = 18;
constexpr std::size_t kMaxMembersNamed = 8;

struct Member {
  std::string extension;
  TarEntry entry;
};

// Consecutive members of one shard sharing a key.
struct Group {
  std::string key;
  std::vector<Member> members;
};

// (key, lowercased extension) of a member name, or nothing when it has no key.
std::optional<std::pair<std::string, std::string>> split_key(const std::string& name) {
  const std::size_t slash = name.rfind('/');
  const std::size_t start = slash == std::string::npos ? 0 : slash + 1;
  const bool metadata = slash == std::string::npos && name.size() >= 2 &&
                        name.compare(0, 2, "__") == 0 &&
                        name.compare(name.size() - 2, 2, "__") == 0;
  const std::size_t dot = name.find('.', start);
  if (metadata || dot == std::string::npos || dot == start) return std::nullopt;
  std::string extension = name.substr(dot + 1);
  for (char& c : extension) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return std::make_pair(name.substr(0, dot), std::move(extension));
}

// A non-negative decimal with surrounding ASCII whitespace.
std::optional<std::int64_t> text_label(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  if (text.empty() || text.size() > kMaxLabelDigits) return std::nullopt;
  std::int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::optional<std::int64_t> json_integer(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    return static_cast<std::int64_t>(
        std::min<std::uint64_t>(value.get<std::uint64_t>(), kMaxWebDatasetClasses));
  }
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
    return value.get<std::int64_t>();
  }
  return std::nullopt;
}

// An integer, or an object's integer "label" (else "cls") field.
std::optional<std::int64_t> json_label(std::string_view text) {
  const nlohmann::json json = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (json.is_discarded()) return std::nullopt;
  if (!json.is_object()) return json_integer(json);
  for (const char* field : {"label", "cls"}) {
    if (const auto it = json.find(field); it != json.end()) return json_integer(*it);
  }
  return std::nullopt;
}

template <std::size_t N>
const Member* find_member(const Group& group, const std::array<std::string_view, N>& extensions) {
  for (const std::string_view extension : extensions) {
    for (const Member& member : group.members) {
      if (member.extension == extension) return &member;
    }
  }
  return nullptr;
}

// Indexes shards one by one into `index`.
class ShardIndexer {
 public:
  ShardIndexer(const std::string& pattern, const WebDatasetOptions& options, WebDatasetIndex& index)
      : pattern_(pattern), options_(options), index_(index) {}

  void index_shard(std::int32_t shard) {
    const std::string& path = index_.shards[static_cast<std::size_t>(shard)];
    std::error_code error;
    if (!std::filesystem::exists(path, error)) {
      return bad("webdataset:" + path + ": no such shard (from the pattern \"" + pattern_ + "\")");
    }
    std::optional<TarFile> file;
    TarIndex tar;
    try {
      file.emplace(path);
      tar = index_tar(*file);
    } catch (const runtime::DataError& e) {
      return bad(e.what());
    }
    index_.ignored_members += tar.skipped;
    Group group;
    for (TarEntry& entry : tar.entries) {
      std::optional<std::pair<std::string, std::string>> split = split_key(entry.name);
      if (!split) {
        ++index_.ignored_members;
        continue;
      }
      if (split->first != group.key) {
        add_sample(*file, shard, group);
        group = Group{std::move(split->first), {}};
      }
      group.members.push_back(Member{std::move(split->second), std::move(entry)});
    }
    add_sample(*file, shard, group);
  }

 private:
  void bad(const std::string& message) {
    if (!options_.skip_bad) throw runtime::DataError(message);
    index_.skipped.push_back(message);
  }

  std::string sample_name(const TarFile& file, const Group& group) const {
    return "webdataset:" + file.path() + ": sample \"" + group.key + "\": ";
  }

  std::string member_list(const Group& group) const {
    std::string list;
    for (std::size_t i = 0; i < group.members.size() && i < kMaxMembersNamed; ++i) {
      list += (i == 0 ? "" : ", ") + group.members[i].entry.name;
    }
    return group.members.size() > kMaxMembersNamed ? list + ", ..." : list;
  }

  // Why the group cannot be a sample, or nothing; sets the image and label members when it can.
  std::optional<std::string> check_members(const Group& group, const Member*& image,
                                           const Member*& label) const {
    std::vector<std::string_view> extensions;  // sorted: a hostile sample may have many members
    for (const Member& member : group.members) extensions.push_back(member.extension);
    std::sort(extensions.begin(), extensions.end());
    if (const auto twice = std::adjacent_find(extensions.begin(), extensions.end());
        twice != extensions.end()) {
      return "two members with the extension \"" + std::string(*twice) + "\" (" +
             member_list(group) + ")";
    }
    image = find_member(group, kImageExtensions);
    label = find_member(group, kLabelExtensions);
    if (!image) return "no image member (.jpg, .jpeg, .png); its members: " + member_list(group);
    if (!label) return "no label member (.cls, .txt, .json); its members: " + member_list(group);
    return std::nullopt;
  }

  // The label in `member`, or why there is none.
  std::pair<std::optional<std::int64_t>, std::string> read_label(const TarFile& file,
                                                                 const Member& member) {
    const std::string& name = member.entry.name;
    if (member.entry.size > kMaxLabelMemberBytes) {
      return {std::nullopt, name + " holds " + std::to_string(member.entry.size) +
                                " bytes, more than a label (at most " +
                                std::to_string(kMaxLabelMemberBytes) + ")"};
    }
    read_member(file, member.entry, buffer_);
    const std::string_view text(reinterpret_cast<const char*>(buffer_.data()), buffer_.size());
    const bool json = member.extension == "json";
    const std::optional<std::int64_t> label = json ? json_label(text) : text_label(text);
    const std::int64_t classes = options_.class_names.empty()
                                     ? kMaxWebDatasetClasses
                                     : static_cast<std::int64_t>(options_.class_names.size());
    if (label && *label < classes) return {label, {}};
    const std::string expected =
        json ? "an integer or an object with an integer \"label\" or \"cls\" field, "
             : "an integer, ";
    return {std::nullopt, name + " holds \"" + printable(text, 40) + "\"; expected " + expected +
                              "0 .. " + std::to_string(classes - 1) +
                              (options_.class_names.empty() ? "" : " (the class names given)")};
  }

  void add_sample(const TarFile& file, std::int32_t shard, const Group& group) {
    if (group.members.empty()) return;
    const Member* image = nullptr;
    const Member* label_member = nullptr;
    if (const std::optional<std::string> why = check_members(group, image, label_member)) {
      return bad(sample_name(file, group) + *why);
    }
    const auto [label, why] = read_label(file, *label_member);
    if (!label) return bad(sample_name(file, group) + why);
    index_.ignored_members += static_cast<std::int64_t>(group.members.size()) - 2;
    index_.samples.push_back(
        WebDatasetSample{shard, image->entry, static_cast<std::int32_t>(*label)});
  }

  const std::string& pattern_;
  const WebDatasetOptions& options_;
  WebDatasetIndex& index_;
  std::vector<std::uint8_t> buffer_;  // label bytes, reused
};

std::vector<std::string> numbered_classes(const std::vector<WebDatasetSample>& samples) {
  std::int32_t largest = 0;
  for (const WebDatasetSample& sample : samples) largest = std::max(largest, sample.label);
  std::vector<std::string> classes;
  for (std::int32_t label = 0; label <= largest; ++label) classes.push_back(std::to_string(label));
  return classes;
}

}  // namespace

WebDatasetIndex index_webdataset(const std::string& pattern, const WebDatasetOptions& options) {
  WebDatasetIndex index;
  index.shards = expand_braces(pattern);
  ShardIndexer indexer(pattern, options, index);
  for (std::size_t shard = 0; shard < index.shards.size(); ++shard) {
    indexer.index_shard(static_cast<std::int32_t>(shard));
  }
  if (index.samples.empty()) {
    throw runtime::DataError("webdataset:" + pattern + ": no samples in " +
                             std::to_string(index.shards.size()) + " shard(s)" +
                             (index.skipped.empty()
                                  ? ""
                                  : " (" + std::to_string(index.skipped.size()) +
                                        " shards or samples skipped as bad: " + index.skipped[0] +
                                        (index.skipped.size() > 1 ? "; ..." : "") + ")"));
  }
  index.classes =
      options.class_names.empty() ? numbered_classes(index.samples) : options.class_names;
  return index;
}

}  // namespace vdnn::models
