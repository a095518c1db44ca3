// Cursor: one value of a parsed config together with where it is (file, JSON Pointer, and for
// template layers the expanded name), so that every read can fail with a precise ConfigError.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layers/LayerSpec.hpp"
#include "models/config/JsonReader.hpp"

namespace vdnn::models::config {

/// Closed or open interval of real values, for attributes such as eps or p.
struct RealRange {
  double lo = 0.0;
  double hi = 0.0;
  bool lo_open = false;
  bool hi_open = false;
};

/// Notes per object key, appended to the location of that member (e.g. which `$param` a value
/// came from).
using KeyNotes = std::map<std::string, std::string>;

/// A non-owning view of a JSON value and its location. The JSON value, the source name and any
/// KeyNotes must outlive the cursor and every cursor derived from it. Read functions throw
/// ConfigError saying what was expected and what was found.
class Cursor {
 public:
  /// `note` is shown after the pointer, e.g. "expanded as stage2.17.conv1".
  Cursor(const std::string& source, const Json& value, std::string pointer, std::string note = {},
         const KeyNotes* key_notes = nullptr);

  const Json& json() const noexcept { return *value_; }
  const std::string& source() const noexcept { return *source_; }
  const std::string& pointer() const noexcept { return pointer_; }
  /// The pointer followed by the note in parentheses, as used in messages; empty for the
  /// document root.
  std::string location() const;
  /// "SOURCE at LOCATION": what a LayerDef::origin holds.
  std::string origin() const;

  [[noreturn]] void fail(const std::string& message) const;

  /// Checks that this is an object whose keys are all in `allowed`; `what` names the object in
  /// the message ("a conv2d layer").
  void expect_object(const std::vector<std::string_view>& allowed, const std::string& what) const;
  /// Checks that this is an array of `min` to `max` elements and returns its size.
  std::size_t expect_array(std::size_t min, std::size_t max) const;

  /// Member `key` of an object; nullopt when absent.
  std::optional<Cursor> find(const std::string& key) const;
  /// Member `key` of an object; fails naming `key` when absent.
  Cursor required(const std::string& key) const;
  Cursor at(std::size_t index) const;

  std::string as_string() const;
  /// A string matching ^[A-Za-z0-9_-]+$ (layer, block and template names).
  std::string as_name() const;
  /// Names as as_name joined by '.', 1 to 128 characters in all ("downsample.0"): the local names
  /// of template layers, so that a repetition can name a layer as PyTorch names a submodule.
  std::string as_dotted_name() const;
  std::int64_t as_int(std::int64_t lo, std::int64_t hi) const;
  /// An integer in [lo, hi] for both extents, or an array [h, w] of two such integers.
  layers::Pair as_pair(std::int64_t lo, std::int64_t hi) const;
  bool as_bool() const;
  double as_real(const RealRange& range) const;

 private:
  Cursor child(const Json& value, const std::string& token, const std::string& note) const;

  const std::string* source_;
  const Json* value_;
  std::string pointer_;
  std::string note_;
  const KeyNotes* key_notes_;
};

/// "a, b, c": the items joined for a message.
std::string join(const std::vector<std::string_view>& items);

}  // namespace vdnn::models::config
