// WebDatasetIndex: the samples of WebDataset tar shards (`<key>.jpg` + `<key>.cls`) named by a
// brace pattern, grouped by key as WebDataset groups them, with their integer labels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/data/image/TarReader.hpp"

namespace vdnn::models {

/// Labels are below this (so the class list stays small whatever a shard says).
inline constexpr std::int64_t kMaxWebDatasetClasses = 1'000'000;
/// Largest label member (.cls, .txt, .json) read.
inline constexpr std::int64_t kMaxLabelMemberBytes = 64 * 1024;

/// How index_webdataset treats bad samples and names classes.
struct WebDatasetOptions {
  /// Skip (and describe in WebDatasetIndex::skipped) the shard or sample of what is otherwise an
  /// error (see index_webdataset); a source without any sample stays an error.
  bool skip_bad = false;
  /// Class names, label = position; every label must be below their number. Empty: "0" .. "K-1"
  /// with K = the largest label + 1.
  std::vector<std::string> class_names;
};

/// One sample: the shard (an index into WebDatasetIndex::shards), its image member and its label.
struct WebDatasetSample {
  std::int32_t shard = 0;
  TarEntry image;
  std::int32_t label = 0;
};

/// What index_webdataset found.
struct WebDatasetIndex {
  std::vector<std::string> shards;   // the expanded pattern, in order
  std::vector<std::string> classes;  // label = position
  std::vector<WebDatasetSample> samples;
  /// Members passed over: without a key, `__name__` metadata, members of a sample that are neither
  /// its image nor its label, and non-regular tar entries (links, devices).
  std::int64_t ignored_members = 0;
  /// With skip_bad: one message per shard or sample skipped, as the error would have said it.
  std::vector<std::string> skipped;
};

/// Indexes the shards that expand_braces(pattern) names, in that order, each with index_tar.
/// Members group into samples as WebDataset's group_by_keys does: the key of a member is its path
/// up to the first '.' of its last component and its extension the rest, lowercased (`a/b.seg.png`
/// is key `a/b`, extension `seg.png`); consecutive members with one key form a sample (the same
/// key again later is another sample). Members whose last component has no '.' or starts with
/// one, and top-level `__name__` members, have no key and are ignored. A sample's image is its
/// .jpg, else .jpeg, else .png member; its label comes from .cls, else .txt (an integer as text,
/// surrounding ASCII whitespace allowed), else .json (an integer, or an object with an integer
/// "label", else "cls", field). Samples keep shard order, then member order.
/// Throws runtime::InvalidArgument for a bad pattern (see expand_braces) and runtime::DataError
/// naming the shard (and the sample's key): a shard that is missing or not a valid tar (the
/// TarReader errors), a sample without an image or a label, a duplicate extension in a sample, a
/// label member over kMaxLabelMemberBytes, a label that is no integer in 0 ..
/// kMaxWebDatasetClasses - 1 or not below the number of class_names; with options.skip_bad each
/// such shard or sample is skipped instead. A source without any sample is a DataError naming the
/// pattern whatever the options.
WebDatasetIndex index_webdataset(const std::string& pattern, const WebDatasetOptions& options = {});

}  // namespace vdnn::models
