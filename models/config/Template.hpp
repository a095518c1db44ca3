// Block templates: a named list of layers, instantiated once per repetition with its `$param`
// values substituted.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "models/config/Cursor.hpp"

namespace vdnn::models::config {

/// The reference that, inside a template, stands for the input of the repetition.
inline constexpr const char* kBlockInput = "$in";
/// Most layers a network (and so a template) may have once expanded.
inline constexpr std::size_t kMaxLayers = std::size_t{1} << 20;

/// One template, as read from /templates/NAME. Holds cursors into the parsed document.
struct Template {
  std::string name;
  Cursor layers;                         // the array of layer objects
  std::vector<std::string> layer_names;  // local names, in order ("conv1", "downsample.0")
  std::map<std::string, Cursor> params;  // parameter name -> its first use
  bool used = false;
};

/// A parameter value of one block and where it was set.
struct ParamValue {
  const Json* value = nullptr;
  std::string pointer;
};
using ParamValues = std::map<std::string, ParamValue>;

/// Reads the template at `layers` (a non-empty array of layer objects with unique literal names,
/// which may contain dots: Cursor::as_dotted_name) and collects the parameters its values use.
/// Throws ConfigError.
Template read_template(std::string name, const Cursor& layers);

/// Checks that `value` (a "params" or "first" member) can be a parameter value: a string, number,
/// boolean or array. Throws ConfigError.
ParamValue read_param_value(const Cursor& value);

/// Layer `index` of `tmpl` with every "$param" value (anywhere but in "name" and "type") replaced
/// by its value in `values`, which must define every parameter of the template. Records in `notes`,
/// for each key whose value was substituted, "$param from POINTER".
Json instantiate(const Template& tmpl, std::size_t index, const ParamValues& values,
                 KeyNotes& notes);

}  // namespace vdnn::models::config
