// The stable policy-to-colour assignment of report.html.
#include "tools/compare/PolicyPalette.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace vdnn::tools {
namespace {

constexpr std::array<std::pair<const char*, const char*>, 9> kKnown = {{
    {"baseline", "#332288"},
    {"vdnn-all", "#117733"},
    {"vdnn-conv", "#44AA99"},
    {"vdnn-dyn", "#88CCEE"},
    {"uvm", "#DDCC77"},
    {"uvm-evict", "#CC6677"},
    {"uvm-prefetch", "#AA4499"},
    {"auto", "#882255"},
    {"recompute", "#999933"},
}};

// For names vdnn does not know; distinct from kKnown and from the timeline's colours.
constexpr std::array<const char*, 6> kExtra = {"#EE3377", "#33BBEE", "#CC3311",
                                               "#009988", "#FFAABB", "#AAAA00"};

// "#rrggbb" halfway to white.
std::string paler(const std::string& colour) {
  const unsigned long rgb = std::strtoul(colour.c_str() + 1, nullptr, 16);
  char out[8];
  std::snprintf(out, sizeof out, "#%02lX%02lX%02lX", (((rgb >> 16) & 0xFF) + 0xFF) / 2,
                (((rgb >> 8) & 0xFF) + 0xFF) / 2, ((rgb & 0xFF) + 0xFF) / 2);
  return out;
}

}  // namespace

PolicyPalette::PolicyPalette(const std::vector<std::string>& policies) {
  for (const auto& [name, colour] : kKnown) colours_.emplace(name, colour);
  std::size_t next_extra = 0;
  for (const std::string& policy : policies) {
    if (colours_.count(policy) != 0) continue;
    // More unknown names than colours: they repeat, which the legend still disambiguates by name.
    colours_.emplace(policy, kExtra[next_extra++ % kExtra.size()]);
  }
}

const std::string& PolicyPalette::colour(const std::string& policy) const {
  const auto it = colours_.find(policy);
  return it == colours_.end() ? unknown_ : it->second;
}

std::string PolicyPalette::colour(const std::string& policy, const std::string& precision) const {
  const std::string& base = colour(policy);
  return precision == "bf16" ? paler(base) : base;
}

}  // namespace vdnn::tools
