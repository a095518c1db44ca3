// Typed reads of config values; each failure names the file, the JSON Pointer, what was expected
// and what was found.
#include "models/config/Cursor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "models/ConfigError.hpp"

namespace vdnn::models::config {
namespace {

// The value as the message quotes it, shortened so one huge array cannot flood the message.
std::string quote(const Json& value) {
  constexpr std::size_t kMaxChars = 60;
  std::string text = value.dump();
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

std::string interval(std::int64_t lo, std::int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

std::string interval(const RealRange& r) {
  std::ostringstream out;
  out << (r.lo_open ? "(" : "[") << r.lo << ", " << r.hi << (r.hi_open ? ")" : "]");
  return out.str();
}

constexpr std::size_t kMaxNameChars = 128;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

std::string join(const std::vector<std::string_view>& items) {
  std::string out;
  for (const std::string_view item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

Cursor::Cursor(const std::string& source, const Json& value, std::string pointer, std::string note,
               const KeyNotes* key_notes)
    : source_(&source),
      value_(&value),
      pointer_(std::move(pointer)),
      note_(std::move(note)),
      key_notes_(key_notes) {}

std::string Cursor::location() const {
  return note_.empty() ? pointer_ : pointer_ + " (" + note_ + ")";
}

std::string Cursor::origin() const { return *source_ + " at " + location(); }

void Cursor::fail(const std::string& message) const {
  throw ConfigError(*source_, location(), message);
}

void Cursor::expect_object(const std::vector<std::string_view>& allowed,
                           const std::string& what) const {
  if (!value_->is_object()) fail("expected " + what + " (a JSON object), got " + quote(*value_));
  for (const auto& member : value_->items()) {
    if (std::find(allowed.begin(), allowed.end(), member.key()) == allowed.end()) {
      child(member.value(), pointer_token(member.key()), note_)
          .fail("unknown key \"" + member.key() + "\" in " + what +
                "; allowed keys: " + (allowed.empty() ? std::string("none") : join(allowed)));
    }
  }
}

std::size_t Cursor::expect_array(std::size_t min, std::size_t max) const {
  if (!value_->is_array() || value_->size() < min || value_->size() > max) {
    fail("expected an array of " + std::to_string(min) + " to " + std::to_string(max) +
         " elements, got " + quote(*value_));
  }
  return value_->size();
}

Cursor Cursor::child(const Json& value, const std::string& token, const std::string& note) const {
  return Cursor(*source_, value, pointer_ + "/" + token, note);
}

std::optional<Cursor> Cursor::find(const std::string& key) const {
  const auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  std::string note = note_;
  if (key_notes_ != nullptr) {
    const auto extra = key_notes_->find(key);
    if (extra != key_notes_->end()) note += (note.empty() ? "" : "; ") + extra->second;
  }
  return child(*it, pointer_token(key), note);
}

Cursor Cursor::required(const std::string& key) const {
  std::optional<Cursor> member = find(key);
  if (!member) fail("missing required key \"" + key + "\"");
  return *member;
}

Cursor Cursor::at(std::size_t index) const {
  return child(value_->at(index), std::to_string(index), note_);
}

std::string Cursor::as_string() const {
  if (!value_->is_string()) fail("expected a string, got " + quote(*value_));
  return value_->get<std::string>();
}

std::string Cursor::as_name() const {
  std::string name = as_string();
  if (name.empty() || name.size() > kMaxNameChars ||
      !std::all_of(name.begin(), name.end(), is_name_char)) {
    fail("expected a name of 1 to " + std::to_string(kMaxNameChars) +
         " letters, digits, '_' or '-', got " + quote(*value_));
  }
  return name;
}

std::string Cursor::as_dotted_name() const {
  std::string name = as_string();
  bool part_empty = true;  // the part being read has no character yet
  bool valid = !name.empty() && name.size() <= kMaxNameChars;
  for (const char c : name) {
    if (c == '.') {
      valid = valid && !part_empty;
      part_empty = true;
    } else {
      valid = valid && is_name_char(c);
      part_empty = false;
    }
  }
  if (!valid || part_empty) {
    fail("expected a name of 1 to " + std::to_string(kMaxNameChars) +
         " letters, digits, '_' or '-', or such names joined by '.' (\"downsample.0\"), got " +
         quote(*value_));
  }
  return name;
}

std::int64_t Cursor::as_int(std::int64_t lo, std::int64_t hi) const {
  // An unsigned value above INT64_MAX is outside every range.
  const bool fits = value_->is_number_integer() &&
                    !(value_->is_number_unsigned() &&
                      value_->get<std::uint64_t>() >
                          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  const std::int64_t v = fits ? value_->get<std::int64_t>() : 0;
  if (!fits || v < lo || v > hi) {
    fail("expected an integer in " + interval(lo, hi) + ", got " + quote(*value_));
  }
  return v;
}

layers::Pair Cursor::as_pair(std::int64_t lo, std::int64_t hi) const {
  if (value_->is_number_integer()) {
    const std::int64_t both = as_int(lo, hi);
    return {both, both};
  }
  if (!value_->is_array() || value_->size() != 2) {
    fail("expected an integer in " + interval(lo, hi) +
         " or an array [h, w] of two such integers, got " + quote(*value_));
  }
  return {at(0).as_int(lo, hi), at(1).as_int(lo, hi)};
}

bool Cursor::as_bool() const {
  if (!value_->is_boolean()) fail("expected true or false, got " + quote(*value_));
  return value_->get<bool>();
}

double Cursor::as_real(const RealRange& r) const {
  const double v =
      value_->is_number() ? value_->get<double>() : std::numeric_limits<double>::quiet_NaN();
  const bool above_lo = r.lo_open ? v > r.lo : v >= r.lo;
  const bool below_hi = r.hi_open ? v < r.hi : v <= r.hi;
  if (!(above_lo && below_hi))
    fail("expected a number in " + interval(r) + ", got " + quote(*value_));
  return v;
}

}  // namespace vdnn::models::config
