// `vdnn plan`: build the graph and the CPU layers (for workspace sizes, unless a cost file gives
// the measured device's), plan, print.
#include "tools/cli/PlanCommand.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/Fusion.hpp"
#include "graph/LayerSet.hpp"
#include "graph/Planner.hpp"
#include "graph/Precision.hpp"
#include "graph/Search.hpp"
#include "layers/Optimizer.hpp"
#include "models/ConfigLoader.hpp"
#include "models/train/CostCacheDir.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/Error.hpp"
#include "tools/cli/PlanJson.hpp"

namespace vdnn::tools {
namespace {

nlohmann::json plan_json(const graph::Graph& g, const graph::Plan& plan) {
  nlohmann::json actions = nlohmann::json::array();
  for (const graph::Action& a : plan.actions) {
    actions.push_back(
        {{"op", graph::op_name(a.op)},
         {"tensor", a.tensor == graph::kNetworkInput ? graph::kInputName : g.node(a.tensor).name},
         {"bytes", a.bytes},
         {"device_bytes", plan.resident_bytes + a.device_bytes}});
    const bool copy = a.op == graph::Op::Offload || a.op == graph::Op::Prefetch;
    if (copy && plan.peer_device >= 0) actions.back()["tier"] = graph::tier_name(a.tier);
  }
  nlohmann::json out = {{"network", g.name()},
                        {"batch", g.batch()},
                        {"precision", graph::precision_name(graph::precision_of(g))}};
  out.update(plan_totals(plan));
  out["dense_blocks"] = dense_blocks_json(g);
  out["purpose"] = plan.purpose == graph::Purpose::Inference ? "inference" : "training";
  out["actions"] = std::move(actions);
  return out;
}

}  // namespace

CLI::App* add_plan_command(CLI::App& app, PlanOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "plan", "Print the memory plan of one training step (--inference: of an inference pass)");
  cmd->add_option("--config", o.config, "Network config (JSON)")->required();
  cmd->add_option("--batch", o.batch, "Mini-batch size")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cmd->add_option("--policy", o.policy, "What leaves device memory (as for vdnn train)")
      ->capture_default_str()
      ->check(CLI::IsMember(graph::policy_names()));
  cmd->add_option("--mem-budget", o.mem_budget, "Device memory budget, e.g. 6GiB (default: none)");
  cmd->add_option("--costs", o.costs,
                  "A costs-*.json file of the setup cache (vdnn train; see --cost-cache) or its "
                  "value: layer times and workspaces as measured there (default: costs "
                  "estimated from arithmetic and bytes, CPU workspaces)");
  cmd->add_flag("--no-fuse", o.no_fuse,
                "Plan the network without merging batchnorm2d -> [add ->] relu chains (as vdnn "
                "train --no-fuse)");
  cmd->add_option("--precision", o.precision,
                  "Feature maps and their gradients: fp32 or bf16 (as vdnn train --precision)")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp32", "bf16"}));
  cmd->add_option("--optimizer", o.optimizer,
                  "The optimizer whose state stays resident (AdamW: two tensors per parameter; as "
                  "vdnn train --optimizer)")
      ->capture_default_str()
      ->check(CLI::IsMember(layers::optimizer_names()));
  cmd->add_flag("--inference", o.inference,
                "Plan inference alone, as a Predictor runs it: a forward pass in eval mode over "
                "the parameters, no gradients, optimizer state or backward");
  add_tier_options(*cmd, o.tiers);
  add_data_parallel_options(*cmd, o.data_parallel);
  cmd->add_flag("--json", o.json, "Print JSON instead of a table");
  return cmd;
}

namespace {

runtime::DType requested_precision(const PlanOptions& o) {
  const std::optional<runtime::DType> maps = graph::parse_precision(o.precision);
  if (!maps) throw runtime::InvalidArgument("--precision " + o.precision + ": fp32 or bf16");
  return *maps;
}

graph::Purpose purpose(const PlanOptions& o) {
  return o.inference ? graph::Purpose::Inference : graph::Purpose::Training;
}

// The text plan's first line.
std::string precision_line(const graph::Graph& g) {
  return std::string("precision: ") + graph::precision_name(graph::precision_of(g)) + "\n";
}

// The plan as printed, with --gpus N its data-parallel lines and fields (the plan holds NCCL's
// bytes as a session of N ranks would).
void print_plan(const PlanOptions& o, const graph::Graph& g, graph::Plan plan,
                const graph::CostModel& costs, nlohmann::json json, const std::string& text) {
  const DataParallelPlanOptions& dp = o.data_parallel;
  std::optional<DataParallelReport> report;
  if (dp.gpus > 1 && !o.inference) {
    report = data_parallel_report(g, plan, costs, dp);
    plan.communicator_bytes = report->nccl_bytes;
  }
  const std::vector<graph::MoveReason> moves = graph::explain_moves(g, plan, costs);
  if (o.json) {
    json.update(plan_json(g, plan));
    json["moves"] = moves_json(moves);
    if (report) json["data_parallel"] = data_parallel_json(*report);
    std::cout << json.dump(1) << "\n";
    return;
  }
  std::cout << text << graph::format_moves(moves) << "\n" << graph::format_plan(g, plan);
  if (report) std::cout << format_data_parallel(*report, dp);
}

// With --costs: the graph the costs were measured for (fused unless --no-fuse), planned with the
// measured device's workspaces; nothing is searched but where auto rebuilds instead of copying.
int plan_with_cost_file(const PlanOptions& o, const graph::Graph& built) {
  std::vector<graph::FusedChain> fusion;
  const graph::Graph source = graph::with_precision(built, requested_precision(o));
  const graph::Graph g = o.no_fuse ? source : graph::fuse(source, &fusion);
  graph::PlanRequest request;
  request.policy = graph::parse_policy(o.policy);
  request.budget_bytes = budget_beside_nccl(
      o.mem_budget.empty() ? 0 : runtime::parse_bytes(o.mem_budget), o.data_parallel);
  const graph::CostModel costs = models::read_cost_file(o.costs, g);
  request.costs = &costs;
  request.optimizer_state_buffers = layers::state_buffers(layers::parse_optimizer(o.optimizer));
  request.purpose = purpose(o);
  const graph::PeerTier peer = peer_tier(o.tiers);
  request.peer_device = peer.device;
  request.peer_budget_bytes = peer.budget_bytes;
  request.host_budget_bytes = host_budget(o.tiers).value_or(graph::kNoHostBudget);
  if (!o.inference) request.data_parallel = data_parallel_plan(o.data_parallel);
  for (const graph::LayerCost& c : costs.layers) {
    request.workspace.push_back({c.forward_workspace, c.backward_workspace});
  }
  const graph::Plan plan = graph::rebuild_where_faster(g, request, graph::make_plan(g, request));
  print_plan(o, g, plan, costs, {{"fused_chains", fusion.size()}},
             precision_line(g) + graph::format_fusion(fusion) + "\n");
  return 0;
}

}  // namespace

int run_plan(const PlanOptions& o) {
  const graph::Graph built = graph::Graph::build(models::load_network(o.config), o.batch);
  if (!o.costs.empty()) return plan_with_cost_file(o, built);
  // The search a CPU session makes, with estimated costs and CPU workspaces (Note [Search]).
  graph::SessionOptions options;
  options.policy = graph::parse_policy(o.policy);
  options.budget_bytes = budget_beside_nccl(
      o.mem_budget.empty() ? 0 : runtime::parse_bytes(o.mem_budget), o.data_parallel);
  options.fuse = !o.no_fuse;
  options.precision = requested_precision(o);
  options.executor.optimizer.kind = layers::parse_optimizer(o.optimizer);
  options.purpose = purpose(o);
  const graph::PeerTier peer = peer_tier(o.tiers);
  options.peer_device = peer.device;
  options.peer_budget_bytes = peer.budget_bytes;
  options.host_budget_bytes = host_budget(o.tiers);
  options.data_parallel = data_parallel_plan(o.data_parallel);
  layers::LayerCache cache;
  graph::SearchContext ctx;
  ctx.layer_options.cache = &cache;
  const auto start = std::chrono::steady_clock::now();
  const graph::SearchResult found = graph::search_run(built, options, ctx);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const nlohmann::json json = {{"fused_chains", found.fusion.size()},
                               {"unfused_chains", found.declined.size()},
                               {"choices", found.reasons},
                               {"search_seconds", seconds}};
  print_plan(o, found.graph, found.plan, found.costs, json,
             precision_line(found.graph) + graph::format_fusion(found.fusion) + "\n" +
                 graph::format_reasons(found.reasons) + "\n");
  if (!o.json) std::printf("searched in:           %.2f s\n", seconds);
  return 0;
}

}  // namespace vdnn::tools
