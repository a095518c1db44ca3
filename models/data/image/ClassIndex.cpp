// The class index file (classes.txt): written through a temporary file, read back with every line
// checked, and compared with the network's number of classes.
#include "models/data/image/ClassIndex.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <unordered_map>

#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw runtime::DataError("class index " + path + ": " + what);
}

std::string read_text(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) fail(path, "cannot be read: " + error.message());
  if (size > static_cast<std::uintmax_t>(kMaxClassIndexBytes)) {
    fail(path, std::to_string(size) + " bytes, more than a class list (at most " +
                   std::to_string(kMaxClassIndexBytes) + ")");
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) fail(path, "cannot be read");
  return text;
}

}  // namespace

void write_class_index(const std::string& path, const std::vector<std::string>& classes) {
  VDNN_EXPECTS(!classes.empty(), "a class index needs at least one class (" + path + ")");
  std::string text;
  for (std::size_t k = 0; k < classes.size(); ++k) {
    const std::string& name = classes[k];
    VDNN_EXPECTS(!name.empty() && name.find_first_of("\r\n") == std::string::npos,
                 "class " + std::to_string(k) + " of " + path +
                     " is empty or holds a line break; a class index has one name per line");
    text += name + '\n';
  }
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw runtime::Error("cannot write the class index " + temp);
  }
  std::error_code error;
  std::filesystem::rename(temp, path, error);
  if (error) {
    throw runtime::Error("cannot rename " + temp + " to the class index " + path + ": " +
                         error.message());
  }
}

std::vector<std::string> read_class_index(const std::string& path) {
  const std::string text = read_text(path);
  std::vector<std::string> classes;
  std::unordered_map<std::string, std::size_t> line_of;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string name = text.substr(start, end - start);
    if (!name.empty() && name.back() == '\r') name.pop_back();
    const std::size_t line = classes.size() + 1;
    if (name.empty())
      fail(path, "line " + std::to_string(line) + " is empty; expected a class name");
    if (const auto [it, added] = line_of.emplace(name, line); !added) {
      fail(path, "line " + std::to_string(line) + " repeats the class \"" + name + "\" of line " +
                     std::to_string(it->second));
    }
    classes.push_back(std::move(name));
    start = end + 1;
  }
  if (classes.empty()) fail(path, "empty; expected one class name per line");
  return classes;
}

void check_num_classes(const std::vector<std::string>& classes, std::int64_t num_classes_of_network,
                       const std::string& source_description) {
  const auto source_classes = static_cast<std::int64_t>(classes.size());
  if (source_classes == num_classes_of_network) return;
  throw runtime::InvalidArgument(source_description + " has " + std::to_string(source_classes) +
                                 " classes, but the network has " +
                                 std::to_string(num_classes_of_network) +
                                 " outputs (its num_classes); set the network's num_classes to " +
                                 std::to_string(source_classes) + " or use data with " +
                                 std::to_string(num_classes_of_network) + " classes");
}

}  // namespace vdnn::models
