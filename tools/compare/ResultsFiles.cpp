// The three files of a comparison, from the one CompareResults.
#include "tools/compare/ResultsFiles.hpp"

#include <fstream>
#include <sstream>

#include "runtime/Error.hpp"
#include "tools/compare/ReportHtml.hpp"

namespace vdnn::tools {
namespace {

using Json = nlohmann::json;

Json cell_json(const CellResult& c) {
  Json j{{"policy", c.policy},
         {"precision", c.precision},
         {"batch", c.batch},
         {"budget_bytes", c.budget_bytes},
         {"network", c.network},
         {"status", cell_status_name(c.status)},
         {"images_per_s", c.images_per_s},
         {"ms_per_iter", c.ms_per_iter},
         {"measured_peak_bytes", c.measured_peak_bytes},
         {"predicted_peak_bytes", c.predicted_peak_bytes},
         {"offloaded_bytes", c.offloaded_bytes},
         {"prefetched_bytes", c.prefetched_bytes},
         {"migrated_bytes", c.migrated_bytes},
         {"offload_gbps", c.offload_gbps},
         {"prefetch_gbps", c.prefetch_gbps},
         {"offload_busy", c.offload_busy},
         {"prefetch_busy", c.prefetch_busy}};
  if (c.peer_offloaded_bytes > 0) {  // Note [Peer tier]: bytes per tier, busy per link
    j.update({{"peer_offloaded_bytes", c.peer_offloaded_bytes},
              {"host_offloaded_bytes", c.offloaded_bytes - c.peer_offloaded_bytes},
              {"peer_offload_busy", c.peer_offload_busy},
              {"peer_prefetch_busy", c.peer_prefetch_busy},
              {"host_offload_busy", c.offload_busy - c.peer_offload_busy},
              {"host_prefetch_busy", c.prefetch_busy - c.peer_prefetch_busy}});
  }
  if (c.depth != 0) j["depth"] = c.depth;
  if (!c.message.empty()) j["message"] = c.message;
  return j;
}

Json timeline_json(const MemoryTimeline& t) {
  Json points = Json::array();
  for (const MemoryPoint& p : t.points) {
    points.push_back({{"layer", p.layer},
                      {"phase", p.backward ? "backward" : "forward"},
                      {"device_bytes", p.device_bytes},
                      {"offloaded_bytes", p.offloaded_bytes}});
  }
  return {{"policy", t.policy},
          {"precision", t.precision},
          {"batch", t.batch},
          {"budget_bytes", t.budget_bytes},
          {"points", points}};
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void replace_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path partial = path;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw runtime::Error("cannot write " + partial.string());
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) throw runtime::Error("cannot replace " + path.string() + ": " + error.message());
}

}  // namespace

Json results_json(const CompareResults& r) {
  Json cells = Json::array();
  for (const CellResult& c : r.cells) cells.push_back(cell_json(c));
  Json searches = Json::array();
  for (const SearchResult& s : r.searches) {
    searches.push_back({{"policy", s.policy},
                        {"precision", s.precision},
                        {"value", s.value},
                        {"images_per_s", s.images_per_s}});
  }
  Json j{{"network", r.network},
         {"device", r.device},
         {"mode", compare_mode_name(r.mode)},
         {"precisions", precisions_of(r)},
         {"cells", cells}};
  if (!r.searches.empty()) j["searches"] = searches;
  if (r.timeline) j["timeline"] = timeline_json(*r.timeline);
  return j;
}

std::string results_csv(const CompareResults& r) {
  std::ostringstream out;
  out << "network,policy,precision,batch,budget_bytes,depth,status,images_per_s,ms_per_iter,"
         "measured_peak_bytes,predicted_peak_bytes,offloaded_bytes,prefetched_bytes,"
         "migrated_bytes,offload_gbps,prefetch_gbps,offload_busy,prefetch_busy,message\n";
  for (const CellResult& c : r.cells) {
    out << csv_field(c.network) << ',' << csv_field(c.policy) << ',' << csv_field(c.precision)
        << ',' << c.batch << ',' << c.budget_bytes << ',' << c.depth << ','
        << cell_status_name(c.status) << ',' << c.images_per_s << ',' << c.ms_per_iter << ','
        << c.measured_peak_bytes << ',' << c.predicted_peak_bytes << ',' << c.offloaded_bytes << ','
        << c.prefetched_bytes << ',' << c.migrated_bytes << ',' << c.offload_gbps << ','
        << c.prefetch_gbps << ',' << c.offload_busy << ',' << c.prefetch_busy << ','
        << csv_field(c.message) << '\n';
  }
  return out.str();
}

void write_results(const std::filesystem::path& dir, const CompareResults& results) {
  replace_file(dir / "results.json", results_json(results).dump(2) + "\n");
  replace_file(dir / "results.csv", results_csv(results));
  replace_file(dir / "report.html", render_report_html(results));
}

}  // namespace vdnn::tools
