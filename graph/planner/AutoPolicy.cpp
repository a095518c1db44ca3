// The `auto` policy: per feature map keep, offload (to the peer or the host) or recompute, chosen
// by predicted cost per byte saved, checked by the step-time model (Note [Automatic placement]).
#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <iterator>
#include <limits>
#include <thread>
#include <utility>
#include <vector>

#include "graph/PoolSimulation.hpp"
#include "graph/StepTimeModel.hpp"
#include "graph/planner/PlanBuilder.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph::planner {
namespace {

// One map's way off the device, and what it costs per byte it saves.
struct Move {
  NodeId tensor = 0;
  Placement to = Placement::Resident;
  double seconds_per_byte = 0.0;

  bool operator==(const Move& o) const {
    return tensor == o.tensor && to == o.to && seconds_per_byte == o.seconds_per_byte;
  }
};

// Which maps the hidden copies go to first: the first produced (their copies start earliest), or
// those dearest to rebuild (a fast link that carries only part of the maps carries those, and the
// cheap ones, batch norms and ReLUs, are rebuilt; Note [Peer tier]).
enum class HiddenFirst : std::uint8_t { Produced, DearestToRebuild };

// Where a chain of rebuilds longer than allowed is broken: at the map that makes it too long, or at
// its smallest rebuilt map (an MBConv block's narrow maps rather than its six times wider
// expansions: EfficientNet-B7 at batch 66 offloaded 36 GiB a step the first way, 11 the second).
enum class ChainBreak : std::uint8_t { AtLimit, AtSmallest };

// The knobs of one candidate: how much of the forward pass hides offload copies (in forward
// passes) and which maps they go to first, how many maps one rebuild may chain (its memory in
// backward), where a chain too long breaks, and where a map goes whose rebuild is not allowed.
struct Knobs {
  double hidden_windows = 0.0;
  HiddenFirst hidden_first = HiddenFirst::Produced;
  int max_depth = 1;
  ChainBreak chain_break = ChainBreak::AtLimit;
  Placement fallback = Placement::Resident;
};

constexpr double kHiddenWindows[] = {0.0, 0.5, 1.0};
// A peer link carries hundreds of MB in a tenth of a forward pass (ResNet-50 b128: 0.42 GB at
// 397 GB/s), so with a peer tier the windows between a half and one pass are tried in tenths: at
// 25% of its peak ResNet-50 b128's best plan hid 0.6 of a pass on one run's measured costs (36.3
// ms predicted; 40.7 ms from the windows above). Windows whose moves repeat are tried once.
constexpr double kPeerHiddenWindows[] = {0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
// Short chains suit networks whose maps are large (ResNet-50), long ones deep networks of small
// maps (ResNet-1001) and dense blocks, whose concatenations chain through the block. Each short
// length counts: at its largest batch EfficientNet-B7 fits chains of 6 broken at their smallest
// maps (972 ms predicted), where 4 and 8 did not fit with the costs of one run (1746 ms).
constexpr int kMaxDepths[] = {1, 2, 3, 4, 5, 6, 8, 12, 16, 32, 64};
constexpr Placement kFallbacks[] = {Placement::Resident, Placement::Offloaded};

// Seconds per byte of rebuilding `t` in backward: its producer's forward (Note [Recomputation]).
double recompute_cost(const Graph& g, const CostModel& costs, NodeId t) {
  if (t == kNetworkInput) return std::numeric_limits<double>::infinity();
  return (costs.forward(t) + costs.gap) / static_cast<double>(tensor_bytes(g, t));
}

// Every map that baseline keeps and the loss does not read may leave the device: offloaded, at the
// cost of its copy where the copy streams are busy (none while the first `hidden_windows` forward
// passes' worth of copies, taken in the order `first` names, hides behind compute), or recomputed,
// at the cost of its producer's forward. An offload goes over the peer link while the peer budget
// lasts, in that order (as the step builder fills the peer; every offloaded map is there at once by
// the end of forward, so the sum is the peak), else over the host link while the host budget lasts
// (Note [Peer tier], Note [Host budget]); past both the map is rebuilt, or stays where it cannot be
// (the network input). Each map takes its cheaper way; moves come cheapest per byte first, hidden
// offloads in that order.
std::vector<Move> moves_by_cost(const Graph& g, const std::vector<Placement>& kept,
                                const CostModel& costs, double hidden_windows, HiddenFirst first,
                                const PlanRequest& request, std::uint64_t host_budget) {
  std::vector<NodeId> leaving;  // in production order
  for (NodeId t = kNetworkInput; t < static_cast<NodeId>(g.nodes().size()); ++t) {
    if (kept[index_of(g, t)] == Placement::Resident && !read_by_loss(g, t)) leaving.push_back(t);
  }
  if (first == HiddenFirst::DearestToRebuild) {
    std::stable_sort(leaving.begin(), leaving.end(), [&](NodeId a, NodeId b) {
      return recompute_cost(g, costs, a) > recompute_cost(g, costs, b);
    });
  }
  const double window = hidden_windows * costs.forward_seconds();
  double copying = 0.0;
  std::uint64_t peer_left = peer_budget(request);
  std::uint64_t host_left = host_budget;
  std::vector<Move> moves;
  for (NodeId t : leaving) {
    const double recompute = recompute_cost(g, costs, t);
    const std::uint64_t on_peer = runtime::MemoryResource::align_up(tensor_bytes(g, t));
    const std::uint64_t on_host = tensor_bytes(g, t);
    if (on_peer > peer_left && on_host > host_left) {
      if (recompute < std::numeric_limits<double>::infinity()) {
        moves.push_back({t, Placement::Recomputed, recompute});
      }
      continue;
    }
    const Tier tier = on_peer <= peer_left ? Tier::Peer : Tier::Host;
    const auto bytes = static_cast<double>(tensor_bytes(g, t));
    const double copy = costs.slower_copy_seconds(tier, bytes);
    const double offload = copy / bytes;
    const bool hidden = copying + copy <= window;
    if (hidden) copying += copy;
    if (hidden || offload <= recompute) {
      if (tier == Tier::Peer) {
        peer_left -= on_peer;
      } else {
        host_left -= on_host;
      }
      moves.push_back({t, Placement::Offloaded, hidden ? -1.0 : offload});  // hidden: first
    } else {
      moves.push_back({t, Placement::Recomputed, recompute});
    }
  }
  std::stable_sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
    return a.seconds_per_byte < b.seconds_per_byte;
  });
  return moves;
}

// The chain depth of a map no rebuild may reach (its chain reads a freed map or the network input).
constexpr int kNever = std::numeric_limits<int>::max() / 2;

// The smallest map that `placement` rebuilds on the chain that ends at `t` and runs back through
// `via` (each map's deepest rebuilt input), the latest of equals.
NodeId smallest_on_chain(const Graph& g, const std::vector<Placement>& placement,
                         const std::vector<NodeId>& via, NodeId t) {
  NodeId best = t;
  for (NodeId m = t; m != kNetworkInput; m = via[index_of(g, m)]) {
    if (placement[index_of(g, m)] == Placement::Recomputed &&
        tensor_bytes(g, m) < tensor_bytes(g, best)) {
      best = m;
    }
  }
  return best;
}

// In topological order, a recomputed map whose rebuild needs a map freed before it (a kept or
// offloaded input whose last backward reader comes first) goes to `fallback` instead; one that
// would chain more than `max_depth` rebuilds breaks its chain where `at_break` says, and the map
// there goes to `fallback`. Rebuilds read kept and offloaded maps, and maps rebuilt themselves
// (Note [Recomputation]). Returns the longest chain of rebuilds it allowed.
int repair(const Graph& g, const Liveness& live, std::vector<Placement>& placement, int max_depth,
           ChainBreak at_break, Placement fallback) {
  std::vector<int> depth(placement.size(), 0);
  std::vector<NodeId> via(placement.size(), kNetworkInput);
  const auto count = static_cast<NodeId>(g.nodes().size());
  for (NodeId t = 0; t < count; ++t) {
    Placement& p = placement[index_of(g, t)];
    if (p != Placement::Recomputed && p != Placement::ForwardOnly) continue;
    int chain = 0;
    NodeId deepest = kNetworkInput;
    for (NodeId in : g.node(t).inputs) {
      const Placement q = placement[index_of(g, in)];
      if (q == Placement::Recomputed || q == Placement::ForwardOnly) {
        const int d = in == kNetworkInput ? kNever : depth[index_of(g, in)];
        if (d > chain) {
          chain = d;
          deepest = d < kNever ? in : kNetworkInput;
        }
      } else if (live.of(in).last_backward_use() > t) {
        chain = kNever;
        deepest = kNetworkInput;
      }
    }
    depth[index_of(g, t)] = std::min(chain + 1, kNever);
    via[index_of(g, t)] = chain < kNever ? deepest : kNetworkInput;
    if (p != Placement::Recomputed || depth[index_of(g, t)] <= max_depth) continue;
    const NodeId at = chain < kNever && at_break == ChainBreak::AtSmallest
                          ? smallest_on_chain(g, placement, via, t)
                          : t;
    placement[index_of(g, at)] = fallback;
    depth[index_of(g, at)] = 0;
    via[index_of(g, at)] = kNetworkInput;
    t = at;  // the maps after it are walked again: their chains ran through it
  }
  int longest = 0;
  for (NodeId t = 0; t < count; ++t) {
    if (placement[index_of(g, t)] == Placement::Recomputed) {
      longest = std::max(longest, depth[index_of(g, t)]);
    }
  }
  return longest;
}

// The depth limits worth trying for `moves`: a limit at or beyond the longest chain that all the
// moves make (rebuilds that read a freed map aside) allows every chain any larger limit allows, so
// of those only the first is tried (ResNet-5000 planned 42 candidates in over two minutes).
std::vector<int> depths_worth_trying(const Graph& g, const Liveness& live,
                                     const std::vector<Placement>& kept,
                                     const std::vector<Move>& moves) {
  std::vector<Placement> placement = kept;
  for (const Move& m : moves) placement[index_of(g, m.tensor)] = m.to;
  const int longest =
      repair(g, live, placement, kNever - 1, ChainBreak::AtLimit, Placement::Resident);
  std::vector<int> depths;
  for (int depth : kMaxDepths) {
    depths.push_back(depth);
    if (depth >= longest) break;
  }
  return depths;
}

// Whether breaking chains at their smallest map changes where every move of `moves` leaves
// chains of at most `max_depth` (where a stage's maps are all alike, ResNet-1001's, it never does:
// the smallest of equals is the last, and the candidate would repeat the other).
bool smallest_breaks_differ(const Graph& g, const Liveness& live,
                            const std::vector<Placement>& kept, const std::vector<Move>& moves,
                            int max_depth) {
  std::vector<Placement> at_limit = kept;
  for (const Move& m : moves) at_limit[index_of(g, m.tensor)] = m.to;
  std::vector<Placement> at_smallest = at_limit;
  repair(g, live, at_limit, max_depth, ChainBreak::AtLimit, Placement::Resident);
  repair(g, live, at_smallest, max_depth, ChainBreak::AtSmallest, Placement::Resident);
  return at_limit != at_smallest;
}

// The plan with the first `count` moves made (and repaired).
Plan with_moves(const Graph& g, const Liveness& live, const PlanRequest& request,
                const std::vector<Placement>& kept, const std::vector<Move>& moves,
                std::size_t count, const Knobs& knobs) {
  std::vector<Placement> placement = kept;
  for (std::size_t i = 0; i < count; ++i) placement[index_of(g, moves[i].tensor)] = moves[i].to;
  repair(g, live, placement, knobs.max_depth, knobs.chain_break, knobs.fallback);
  return plan_for(g, live, Policy::Auto, placement, request, kForwardPeak);
}

// One candidate's fewest moves: the plan, and the maps it moved, dearest first (the order in which
// refine() keeps them again).
struct Fewest {
  Plan plan;
  std::vector<NodeId> dearest_first;
};

// The fewest moves whose plan fits `fit`, by bisection from `plan` of `good` moves (enough) and
// `bad` moves (too few), and that plan.
template <typename PlanOf, typename Fit>
std::pair<std::size_t, Plan> bisect(std::size_t bad, std::size_t good, Plan plan,
                                    const PlanOf& plan_of, const Fit& fit) {
  while (good - bad > 1) {
    const std::size_t mid = bad + (good - bad) / 2;
    Plan trial = plan_of(mid);
    if (fit(trial)) {
      good = mid;
      plan = std::move(trial);
    } else {
      bad = mid;
    }
  }
  return {good, std::move(plan)};
}

// The fewest of `moves` whose plan fits, by bisection (more moves never raise the peak much; the
// search needs O(log N) plans). Fragmentation does not shrink with the moves, though: where the
// allocator cannot place the plan of every move, the bisection runs on the peak alone and the first
// of a few larger counts, at doubling steps, that the allocator places is taken (issue 28: without
// it ResNet-50 b128 at 25% lost the candidates that rebuild chains of two maps, the fastest).
std::optional<Fewest> fewest_of(const Graph& g, const Liveness& live, const PlanRequest& request,
                                const std::vector<Placement>& kept, const std::vector<Move>& moves,
                                const Knobs& knobs) {
  const auto plan_of = [&](std::size_t count) {
    return with_moves(g, live, request, kept, moves, count, knobs);
  };
  const auto placed = [&](const Plan& p) { return fits(g, p); };
  const auto peak_fits = [&](const Plan& p) { return p.predicted_peak <= request.budget_bytes; };
  Plan every = plan_of(moves.size());
  const bool every_placed = placed(every);
  // plan_of(0) is baseline's, which does not fit
  auto [count, plan] = every_placed ? bisect(0, moves.size(), std::move(every), plan_of, placed)
                                    : bisect(0, moves.size(), std::move(every), plan_of, peak_fits);
  for (std::size_t step = 1; !placed(plan); step *= 2) {
    if (count == moves.size()) return std::nullopt;
    count = std::min(moves.size(), count + step);
    plan = plan_of(count);
  }
  Fewest f{std::move(plan), {}};
  for (auto m = moves.rbegin(); m != moves.rend(); ++m) f.dearest_first.push_back(m->tensor);
  return f;
}

// The fewest moves of `knobs` whose plan fits. First searched as if the host held any offload;
// only where that plan pins more than the host budget are the moves priced again within it and
// searched under it (Note [Host budget]): a budget the first plan stays within changes nothing.
std::optional<Fewest> fewest_moves(const Graph& g, const Liveness& live, const PlanRequest& request,
                                   const std::vector<Placement>& kept, const CostModel& costs,
                                   const Knobs& knobs) {
  const auto moves = [&](std::uint64_t host_budget) {
    return moves_by_cost(g, kept, costs, knobs.hidden_windows, knobs.hidden_first, request,
                         host_budget);
  };
  PlanRequest any_host = request;
  any_host.host_budget_bytes = kNoHostBudget;
  std::optional<Fewest> f = fewest_of(g, live, any_host, kept, moves(kNoHostBudget), knobs);
  if (f && f->plan.pinned_bytes <= request.host_budget_bytes) {
    f->plan.host_budget_bytes = request.host_budget_bytes;
    return f;
  }
  if (request.host_budget_bytes == kNoHostBudget) return f;
  return fewest_of(g, live, request, kept, moves(request.host_budget_bytes), knobs);
}

// Whether a consumer of `t` is rebuilt in backward, so that its rebuild reads `t`.
bool read_by_rebuild(const Graph& g, const Plan& plan, NodeId t) {
  const std::vector<NodeId>& consumers = consumers_of(g, t);
  return std::any_of(consumers.begin(), consumers.end(),
                     [&](NodeId c) { return plan.placement_of(c) == Placement::Recomputed; });
}

// Maps backward never reads but rebuilds do (inputs of recomputed maps, freed after forward and
// so rebuilt themselves as temporaries), kept instead where the budget holds them, dearest to
// rebuild per byte first: DenseNet's 3x3 convolutions, small outputs that every rebuilt
// concatenation of a dense block reads (Note [Recomputation]).
Plan retain_rebuilt_inputs(const Graph& g, const Liveness& live, Plan plan,
                           const PlanRequest& request, const CostModel& costs) {
  std::vector<NodeId> inputs;
  for (NodeId t = 0; t < static_cast<NodeId>(g.nodes().size()); ++t) {
    if (plan.placement_of(t) == Placement::ForwardOnly && read_by_rebuild(g, plan, t)) {
      inputs.push_back(t);
    }
  }
  std::stable_sort(inputs.begin(), inputs.end(), [&](NodeId a, NodeId b) {
    return recompute_cost(g, costs, a) > recompute_cost(g, costs, b);
  });
  return place_while_fits(g, live, std::move(plan), request, inputs, Placement::Retained);
}

// Retained maps whose readers were all kept after all go after forward again, where the allocator
// still places the plan.
Plan drop_unread_retained(const Graph& g, const Liveness& live, Plan plan,
                          const PlanRequest& request) {
  std::vector<Placement> placement = plan.placement;
  bool dropped = false;
  for (NodeId t = 0; t < static_cast<NodeId>(g.nodes().size()); ++t) {
    if (plan.placement_of(t) == Placement::Retained && !read_by_rebuild(g, plan, t)) {
      placement[index_of(g, t)] = Placement::ForwardOnly;
      dropped = true;
    }
  }
  if (!dropped) return plan;
  // Fewer maps, but allocations in another order: the allocator may not place them (DenseNet-40
  // b8 under 71 MB with estimated costs; the executor then ran out of its pool at setup).
  Plan without = plan_for(g, live, plan.policy, placement, request, kForwardPeak);
  return fits(g, without) ? without : plan;
}

// The maps the budget can hold kept again, dearest moves undone first, then early prefetches;
// where rebuilds read maps backward does not, also the plan that keeps those first, if it is
// predicted faster.
Plan refine(const Graph& g, const Liveness& live, const PlanRequest& request,
            const CostModel& costs, Fewest f) {
  Plan plain =
      prefetch_early(g, live, keep_what_fits(g, live, f.plan, request, f.dearest_first), request);
  Plan retained = retain_rebuilt_inputs(g, live, std::move(f.plan), request, costs);
  if (std::none_of(retained.placement.begin(), retained.placement.end(),
                   [](Placement p) { return p == Placement::Retained; })) {
    return plain;
  }
  retained = keep_what_fits(g, live, std::move(retained), request, std::move(f.dearest_first));
  retained =
      prefetch_early(g, live, drop_unread_retained(g, live, std::move(retained), request), request);
  return predicted_seconds(g, retained, costs) < predicted_seconds(g, plain, costs) ? retained
                                                                                    : plain;
}

// Every candidate's knobs: each hidden window and order, each depth worth trying, chains broken at
// their limit and, where that differs, at their smallest map, and each fallback.
std::vector<Knobs> candidate_knobs(const Graph& g, const Liveness& live,
                                   const std::vector<Placement>& kept, const CostModel& costs,
                                   const PlanRequest& request) {
  std::vector<Knobs> knobs;
  const std::vector<double> hidden_windows =
      peer_budget(request) > 0
          ? std::vector<double>(std::begin(kPeerHiddenWindows), std::end(kPeerHiddenWindows))
          : std::vector<double>(std::begin(kHiddenWindows), std::end(kHiddenWindows));
  std::vector<std::vector<Move>> tried;
  for (double windows : hidden_windows) {
    for (HiddenFirst first : {HiddenFirst::Produced, HiddenFirst::DearestToRebuild}) {
      const std::vector<Move> moves =
          moves_by_cost(g, kept, costs, windows, first, request, kNoHostBudget);
      if (std::find(tried.begin(), tried.end(), moves) != tried.end()) continue;
      tried.push_back(moves);
      for (int depth : depths_worth_trying(g, live, kept, moves)) {
        std::vector<ChainBreak> breaks{ChainBreak::AtLimit};
        if (smallest_breaks_differ(g, live, kept, moves, depth)) {
          breaks.push_back(ChainBreak::AtSmallest);
        }
        for (ChainBreak at : breaks) {
          for (Placement fallback : kFallbacks) {
            knobs.push_back({windows, first, depth, at, fallback});
          }
        }
      }
    }
  }
  return knobs;
}

// The threads run_on_threads uses: the host's cores, at most 16.
unsigned worker_threads() { return std::clamp(std::thread::hardware_concurrency(), 1U, 16U); }

// Runs work(i) for every i < count on worker_threads() threads (this one among them) and joins
// them; an exception of any is rethrown here.
void run_on_threads(std::size_t count, const std::function<void(std::size_t)>& work) {
  const unsigned threads = worker_threads();
  std::vector<std::exception_ptr> failures(threads);
  std::atomic<std::size_t> next{0};
  const auto guarded = [&](unsigned t) {
    try {
      for (std::size_t i = next++; i < count; i = next++) work(i);
    } catch (...) {
      failures[t] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && t < count; ++t) pool.emplace_back(guarded, t);
  guarded(0);
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& f : failures) {
    if (f) std::rethrow_exception(f);
  }
}

// A plan a trial found, and its predicted step time.
struct Trial {
  Plan plan;
  double seconds = 0.0;
};

// `plan` with offloaded map `t` rebuilt instead, early prefetches as the budget allows, if the
// rebuild may read its inputs (`repair` leaves it rebuilt with no depth limit), the plan fits and
// it is predicted faster than `seconds`. A plan's prefetches issued earlier never make a step
// longer and the allocator's waits only add to it, so where the earliest prefetches without waits
// are not faster, nothing prefetch_early chooses is: that trial ends before its allocator
// replays, which most of them are (EfficientNet-B7 b66 rebuilt 11 of 203 maps).
std::optional<Trial> rebuilt_instead(const Graph& g, const Liveness& live,
                                     const PlanRequest& request, const CostModel& costs,
                                     const Plan& plan, NodeId t, double seconds) {
  std::vector<Placement> placement = plan.placement;
  placement[index_of(g, t)] = Placement::Recomputed;
  repair(g, live, placement, kNever - 1, ChainBreak::AtLimit, Placement::Offloaded);
  if (placement[index_of(g, t)] != Placement::Recomputed) return std::nullopt;
  const auto latest = [&] {
    return plan_for(g, live, Policy::Auto, placement, request, kForwardPeak);
  };
  Plan trial;
  if (request.budget_bytes > 0) {
    // prefetch_early's first plan, built (and replayed) once. Its room depends on the resident
    // bytes alone, which the placement does not change: `plan`'s.
    Plan earliest =
        plan_for(g, live, Policy::Auto, placement, request, prefetch_room(request, plan));
    if (predict_step_seconds(g, earliest, costs) >= seconds) return std::nullopt;
    if (fits(g, earliest)) {
      trial = std::move(earliest);
    } else {
      trial = prefetch_early(g, live, latest(), request, 1);
      if (!fits(g, trial)) return std::nullopt;
    }
  } else {
    trial = latest();
    if (!fits(g, trial)) return std::nullopt;
  }
  const double faster = predicted_seconds(g, trial, costs);
  if (faster >= seconds) return std::nullopt;
  return Trial{std::move(trial), faster};
}

}  // namespace

// Candidates move each map its cheaper way on its own, with only a guess (the hidden windows) of
// how many copies the link carries unseen; where it carries fewer, the forward pass waits for it,
// and a rebuild of a few hundred microseconds in backward costs less than the wait (ConvNeXt-Base
// b558 under 16 GiB offloaded 15.2 GiB a step against 160 ms of forward compute: 821 ms
// predicted, 712 ms with 41 of its 57 offloads rebuilt instead). The maps are tried cheapest to
// rebuild per byte first, in a cycle, until every one left was tried against the plan as it
// stands: a rebuild that did not pay may pay once others are taken (20 of ConvNeXt-Base's were
// on the first round, 21 on later ones). The next worker_threads() maps are tried at once against
// the same plan and the first that pays is taken, which is what trying them one by one takes, on
// any number of cores.
Plan rebuild_instead_of_copying(const Graph& g, const Liveness& live, const PlanRequest& request,
                                const CostModel& costs, Plan plan) {
  std::vector<NodeId> queue;
  for (NodeId t = 0; t < static_cast<NodeId>(g.nodes().size()); ++t) {
    if (plan.placement_of(t) == Placement::Offloaded) queue.push_back(t);
  }
  std::stable_sort(queue.begin(), queue.end(), [&](NodeId a, NodeId b) {
    return recompute_cost(g, costs, a) < recompute_cost(g, costs, b);
  });
  double seconds = predicted_seconds(g, plan, costs);
  std::size_t next = 0;       // the queue's next map to try
  std::size_t unchanged = 0;  // maps tried in a row against the plan as it stands
  while (unchanged < queue.size()) {
    const std::size_t width = std::min<std::size_t>(worker_threads(), queue.size() - unchanged);
    std::vector<std::optional<Trial>> trials(width);
    run_on_threads(width, [&](std::size_t i) {
      trials[i] =
          rebuilt_instead(g, live, request, costs, plan, queue[(next + i) % queue.size()], seconds);
    });
    const auto first = static_cast<std::size_t>(
        std::find_if(trials.begin(), trials.end(), [](const auto& t) { return t.has_value(); }) -
        trials.begin());
    if (first == width) {
      next = (next + width) % queue.size();
      unchanged += width;
      continue;
    }
    plan = std::move(trials[first]->plan);
    seconds = trials[first]->seconds;
    const std::size_t taken = (next + first) % queue.size();
    queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(taken));
    next = queue.empty() ? 0 : taken % queue.size();
    unchanged = 0;
  }
  return plan;
}

double predicted_seconds(const Graph& g, const Plan& plan, const CostModel& costs) {
  if (plan.memory == DeviceMemory::Managed) return predict_step_seconds(g, plan, costs);
  std::uint64_t pool = plan.pool_bytes;
  if (pool == 0) {
    pool = plan.budget_bytes > 0 ? pool_for_budget(plan.budget_bytes) : plan.predicted_pool_peak;
  }
  return predict_step_seconds(g, plan, costs, release_waits(g, plan, pool));
}

// Baseline's plan if it fits. Else, for each set of knobs, the fewest cheapest moves that fit;
// the fixed policies recompute, vdnn-conv and vdnn-all compete too; the least predicted step time
// wins. Each candidate costs O(N log N) plans' worth of work (bisection, keep_what_fits), so auto
// is O(K N log N) for K candidates (at most 264; 616 with a peer tier), spread over the host's
// cores; only the best few are refined.
std::optional<Plan> auto_plan(const Graph& g, const Liveness& live, const PlanRequest& request,
                              const CostModel& costs) {
  const std::vector<Placement> kept = place(g, live, Policy::Baseline);
  Plan baseline = plan_for(g, live, Policy::Auto, kept, request, kForwardPeak);
  if (fits(g, baseline)) return baseline;
  const std::vector<Knobs> knobs = candidate_knobs(g, live, kept, costs, request);
  // Candidates are independent plans of a const graph: they run on threads of their own. First
  // each knob set's fewest moves, ranked by the step-time model without the allocator's waits;
  // then the best kRefined of them refined (keep_what_fits, prefetch_early: most of a candidate's
  // plans), beside the fixed policies, and the least predicted time wins, ties to the first, as a
  // sequential search would choose.
  constexpr std::size_t kRefined = 6;
  std::vector<std::optional<Fewest>> fewest(knobs.size());
  std::vector<double> rough(knobs.size(), std::numeric_limits<double>::infinity());
  run_on_threads(knobs.size(), [&](std::size_t i) {
    fewest[i] = fewest_moves(g, live, request, kept, costs, knobs[i]);
    if (fewest[i]) rough[i] = predicted_seconds(g, fewest[i]->plan, costs);
  });
  std::vector<std::size_t> order(knobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rough[a] < rough[b]; });
  std::vector<std::size_t> refined;
  for (std::size_t i : order) {
    if (fewest[i] && refined.size() < kRefined) refined.push_back(i);
  }
  std::sort(refined.begin(), refined.end());
  constexpr Policy kFixed[] = {Policy::Recompute, Policy::VdnnConv, Policy::VdnnAll};
  const std::size_t count = refined.size() + std::size(kFixed);
  std::vector<std::optional<Plan>> plans(count);
  std::vector<double> seconds(count, std::numeric_limits<double>::infinity());
  run_on_threads(count, [&](std::size_t i) {
    plans[i] = i < refined.size() ? refine(g, live, request, costs, *std::move(fewest[refined[i]]))
                                  : fitting_plan(g, live, kFixed[i - refined.size()], request);
    if (!plans[i]) return;
    plans[i]->policy = Policy::Auto;
    seconds[i] = predicted_seconds(g, *plans[i], costs);
  });
  std::optional<Plan> best;
  double best_seconds = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < count; ++i) {
    if (plans[i] && seconds[i] < best_seconds) {
      best_seconds = seconds[i];
      best = std::move(plans[i]);
    }
  }
  return best;
}

}  // namespace vdnn::graph::planner
