//===- Schedule.cpp - Pipeline schedules: generate, verify, simulate ------===//
//
// GPipe, 1F1B (PipeDream-flush), Megatron-LM's interleaved 1F1B and ZB-H1
// (Qi et al., "Zero Bubble Pipeline Parallelism", 2023) as per-rank action
// lists, and an event-driven simulation that checks them and times them.
//
//===----------------------------------------------------------------------===//

#include "tessel/pipeline/Schedule.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <optional>

using namespace tessel;
using namespace tessel::pipeline;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::StringRef kindLetters(ActionKind kind) {
  switch (kind) {
  case ActionKind::F:
    return "F";
  case ActionKind::B:
    return "B";
  case ActionKind::W:
    return "W";
  case ActionKind::BW:
    return "BW";
  }
  llvm_unreachable("unknown action kind");
}

//===----------------------------------------------------------------------===//
// Generators
//===----------------------------------------------------------------------===//

/// GPipe: every forward, then every backward (in microbatch order).
std::vector<Action> gpipeRank(const ScheduleOptions &o, int64_t rank) {
  std::vector<Action> out;
  for (int64_t i = 0; i < o.microbatches; ++i)
    out.push_back({ActionKind::F, rank, i});
  for (int64_t i = 0; i < o.microbatches; ++i)
    out.push_back({ActionKind::BW, rank, i});
  return out;
}

/// The 1F1B skeleton shared by the plain and the interleaved schedule:
/// `warmup` forwards, then (forward, backward) pairs while forwards remain,
/// then the remaining backwards. forward(j) and backward(j) give the j-th of
/// the rank's `total` forwards and backwards.
template <typename ForwardFn, typename BackwardFn>
std::vector<Action> oneFOneB(int64_t total, int64_t warmup, ForwardFn forward,
                             BackwardFn backward) {
  std::vector<Action> out;
  warmup = std::min(warmup, total);
  for (int64_t j = 0; j < warmup; ++j)
    out.push_back(forward(j));
  int64_t steady = total - warmup;
  for (int64_t j = 0; j < steady; ++j) {
    out.push_back(forward(warmup + j));
    out.push_back(backward(j));
  }
  for (int64_t j = steady; j < total; ++j)
    out.push_back(backward(j));
  return out;
}

/// 1F1B (PipeDream-flush, Megatron-LM's non-interleaved schedule).
std::vector<Action> oneFOneBRank(const ScheduleOptions &o, int64_t rank) {
  auto forward = [=](int64_t j) { return Action{ActionKind::F, rank, j}; };
  auto backward = [=](int64_t j) { return Action{ActionKind::BW, rank, j}; };
  return oneFOneB(o.microbatches, o.ranks - rank - 1, forward, backward);
}

/// Megatron-LM's interleaved 1F1B: the rank's m * v forwards go in groups of
/// `ranks` microbatches through chunk 0, 1, ..., v-1; backwards through the
/// chunks in reverse.
std::vector<Action> interleavedRank(const ScheduleOptions &o, int64_t rank) {
  int64_t p = o.ranks, v = o.virtualStages;
  auto microbatch = [=](int64_t j) { return (j / (p * v)) * p + j % p; };
  auto forward = [=](int64_t j) {
    int64_t chunk = (j / p) % v;
    return Action{ActionKind::F, chunk * p + rank, microbatch(j)};
  };
  auto backward = [=](int64_t j) {
    int64_t chunk = v - 1 - (j / p) % v;
    return Action{ActionKind::BW, chunk * p + rank, microbatch(j)};
  };
  int64_t warmup = (p - rank - 1) * 2 + (v - 1) * p;
  return oneFOneB(o.microbatches * v, warmup, forward, backward);
}

/// ZB-H1 by greedy list scheduling with unit costs: a free rank runs the
/// next F whose input is ready if fewer than ranks - rank of its microbatches
/// wait for their B (1F1B's rule) and fewer than ranks wait for their W (a W
/// still reads the microbatch's stashed inputs: every rank keeps at most as
/// many microbatches as 1F1B's first stage); else the next B whose inputs
/// are ready; else its oldest pending W; else it waits. In the steady state a
/// rank runs F, B, W in turn; later ranks hold their Ws back while the Bs
/// travel to the first stage, and the Ws fill the cool-down. For m >= p the
/// bubble is (p-1)/(3m+p-1), the paper's (p-1)(F+B-W) with F = B = W.
class ZeroBubbleH1Builder {
public:
  explicit ZeroBubbleH1Builder(const ScheduleOptions &o)
      : p(o.ranks), m(o.microbatches), fEnd(p * m, -1), bEnd(p * m, -1),
        nextF(p, 0), nextB(p, 0), waitingB(p, 0), waitingW(p, 0),
        pendingW(p) {}

  llvm::Expected<std::vector<std::vector<Action>>> build();

private:
  std::optional<Action> pick(int64_t rank, int64_t t) const;
  void start(int64_t rank, const Action &a, int64_t t);

  static bool endedBy(int64_t end, int64_t t) { return end >= 0 && end <= t; }

  int64_t p, m;
  /// fEnd[stage * m + microbatch]: when that F (B) ends; -1 before it runs.
  std::vector<int64_t> fEnd, bEnd;
  std::vector<int64_t> nextF, nextB;
  /// Microbatches whose F has run on the rank and whose B (W) has not.
  std::vector<int64_t> waitingB, waitingW;
  std::vector<std::deque<int64_t>> pendingW;
};

std::optional<Action> ZeroBubbleH1Builder::pick(int64_t r, int64_t t) const {
  if (int64_t i = nextF[r]; i < m && waitingB[r] < p - r && waitingW[r] < p) {
    if (r == 0 || endedBy(fEnd[(r - 1) * m + i], t))
      return Action{ActionKind::F, r, i};
  }
  if (int64_t i = nextB[r]; i < m) {
    bool gradReady = r == p - 1 ? endedBy(fEnd[r * m + i], t)
                                : endedBy(bEnd[(r + 1) * m + i], t);
    if (gradReady && endedBy(fEnd[r * m + i], t))
      return Action{ActionKind::B, r, i};
  }
  if (!pendingW[r].empty())
    return Action{ActionKind::W, r, pendingW[r].front()};
  return std::nullopt;
}

void ZeroBubbleH1Builder::start(int64_t r, const Action &a, int64_t t) {
  switch (a.kind) {
  case ActionKind::F:
    fEnd[r * m + a.microbatch] = t + 1;
    ++nextF[r];
    ++waitingB[r];
    ++waitingW[r];
    break;
  case ActionKind::B:
    bEnd[r * m + a.microbatch] = t + 1;
    ++nextB[r];
    --waitingB[r];
    pendingW[r].push_back(a.microbatch);
    break;
  case ActionKind::W:
  case ActionKind::BW:
    pendingW[r].pop_front();
    --waitingW[r];
    break;
  }
}

llvm::Expected<std::vector<std::vector<Action>>> ZeroBubbleH1Builder::build() {
  std::vector<std::vector<Action>> out(p);
  int64_t left = 3 * p * m;
  for (int64_t t = 0; left > 0; ++t) {
    // Each rank is free at every step (unit costs); decisions at step t see
    // only actions ended by t, so the order of the ranks does not matter.
    bool started = false;
    for (int64_t r = 0; r < p; ++r) {
      if (std::optional<Action> a = pick(r, t)) {
        start(r, *a, t);
        out[r].push_back(*a);
        --left;
        started = true;
      }
    }
    // Unit costs: whatever ran ended by t, so a step that starts nothing
    // sees the same state at every later step.
    if (!started)
      return fail("ZB-H1 list scheduling stalls at time " + llvm::Twine(t));
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Verification and simulation
//===----------------------------------------------------------------------===//

/// Checks a schedule's actions and times them.
class Simulator {
public:
  Simulator(const Schedule &s, const Costs &c)
      : schedule(s), costs(c), p(s.options.ranks), m(s.options.microbatches),
        stages(s.options.stages()) {}

  llvm::Error check();
  llvm::Expected<Simulation> run();

private:
  int64_t key(const Action &a) const { return a.stage * m + a.microbatch; }
  char &has(ActionKind k, int64_t stage, int64_t mb) {
    return present[int(k)][stage * m + mb];
  }
  double cost(const Action &a) const;
  llvm::SmallVector<Action, 2> dependencies(const Action &a) const;
  llvm::Error checkAction(int64_t rank, const Action &a);
  llvm::Error checkComplete();
  llvm::Error deadlock(llvm::ArrayRef<size_t> next) const;
  std::vector<int64_t> peakInFlight(const Simulation &sim) const;

  const Schedule &schedule;
  Costs costs;
  int64_t p, m, stages;
  /// present[kind][stage * m + microbatch]; end: when it ends, -1 before.
  std::array<std::vector<char>, 4> present;
  std::array<std::vector<double>, 4> end;
};

double Simulator::cost(const Action &a) const {
  switch (a.kind) {
  case ActionKind::F:
    return costs.f;
  case ActionKind::B:
    return costs.b;
  case ActionKind::W:
    return costs.w;
  case ActionKind::BW:
    return costs.b + costs.w;
  }
  llvm_unreachable("unknown action kind");
}

llvm::SmallVector<Action, 2> Simulator::dependencies(const Action &a) const {
  int64_t k = a.stage, i = a.microbatch;
  switch (a.kind) {
  case ActionKind::F:
    if (k == 0)
      return {};
    return {Action{ActionKind::F, k - 1, i}};
  case ActionKind::W:
    return {Action{ActionKind::B, k, i}};
  case ActionKind::B:
  case ActionKind::BW: {
    llvm::SmallVector<Action, 2> deps{Action{ActionKind::F, k, i}};
    if (k + 1 < stages) {
      bool fused = present[int(ActionKind::BW)][(k + 1) * m + i];
      deps.push_back({fused ? ActionKind::BW : ActionKind::B, k + 1, i});
    }
    return deps;
  }
  }
  llvm_unreachable("unknown action kind");
}

llvm::Error Simulator::checkAction(int64_t rank, const Action &a) {
  std::string name = actionName(a);
  if (a.stage < 0 || a.stage >= stages || a.microbatch < 0 || a.microbatch >= m)
    return fail(name + " is out of range: the schedule has " +
                llvm::Twine(stages) + " stages and " + llvm::Twine(m) +
                " microbatches");
  if (a.stage % p != rank)
    return fail(name + " runs on rank " + llvm::Twine(rank) + " but stage " +
                llvm::Twine(a.stage) + " belongs to rank " +
                llvm::Twine(a.stage % p));
  char &seen = has(a.kind, a.stage, a.microbatch);
  if (seen)
    return fail("rank " + llvm::Twine(rank) + " runs " + name + " twice");
  seen = true;
  return llvm::Error::success();
}

llvm::Error Simulator::checkComplete() {
  for (int64_t k = 0; k < stages; ++k) {
    for (int64_t i = 0; i < m; ++i) {
      auto name = [&](ActionKind kind) { return actionName({kind, k, i}); };
      bool f = has(ActionKind::F, k, i), b = has(ActionKind::B, k, i),
           w = has(ActionKind::W, k, i), bw = has(ActionKind::BW, k, i);
      if (!f)
        return fail("the schedule misses " + name(ActionKind::F));
      if (bw && (b || w))
        return fail(name(ActionKind::BW) + " and " +
                    name(b ? ActionKind::B : ActionKind::W) +
                    " both appear: a backward runs as one BW or as B and W");
      if (!bw && !b && !w)
        return fail("the schedule misses " + name(ActionKind::BW) + " (or " +
                    name(ActionKind::B) + " and " + name(ActionKind::W) + ")");
      if (b != w)
        return fail("the schedule misses " +
                    name(b ? ActionKind::W : ActionKind::B) + " (it has " +
                    name(b ? ActionKind::B : ActionKind::W) + ")");
    }
  }
  return llvm::Error::success();
}

llvm::Error Simulator::check() {
  const ScheduleOptions &o = schedule.options;
  if (o.ranks < 1 || o.virtualStages < 1 || o.microbatches < 1)
    return fail("a schedule needs 1 or more ranks, virtual stages and "
                "microbatches; got " +
                llvm::Twine(o.ranks) + ", " + llvm::Twine(o.virtualStages) +
                " and " + llvm::Twine(o.microbatches));
  if (int64_t(schedule.actions.size()) != p)
    return fail("the schedule lists " + llvm::Twine(schedule.actions.size()) +
                " ranks but its options have " + llvm::Twine(p));
  if (costs.f < 0 || costs.b < 0 || costs.w < 0)
    return fail("the costs of F, B and W must not be negative");
  for (auto &v : present)
    v.assign(stages * m, false);
  for (auto &v : end)
    v.assign(stages * m, -1);
  for (int64_t r = 0; r < p; ++r)
    for (const Action &a : schedule.actions[r])
      if (llvm::Error e = checkAction(r, a))
        return e;
  return checkComplete();
}

llvm::Error Simulator::deadlock(llvm::ArrayRef<size_t> next) const {
  std::string message = "the schedule deadlocks:";
  llvm::raw_string_ostream os(message);
  llvm::ListSeparator sep(";");
  for (int64_t r = 0; r < p; ++r) {
    if (next[r] >= schedule.actions[r].size())
      continue;
    const Action &a = schedule.actions[r][next[r]];
    os << sep << " rank " << r << " waits for " << actionName(a) << " (needs ";
    llvm::ListSeparator and_(" and ");
    for (const Action &d : dependencies(a))
      if (end[int(d.kind)][key(d)] < 0)
        os << and_ << actionName(d);
    os << ")";
  }
  return fail(message);
}

std::vector<int64_t> Simulator::peakInFlight(const Simulation &sim) const {
  std::vector<int64_t> peaks(p, 0);
  for (int64_t r = 0; r < p; ++r) {
    // +1 when an F starts, -1 when its W or BW ends (a W reads the stashed
    // inputs); at equal times the ends go first (the memory is free before
    // the next F needs it).
    std::vector<std::pair<double, int>> events;
    for (auto [a, t] : llvm::zip(schedule.actions[r], sim.times[r])) {
      if (a.kind == ActionKind::F)
        events.push_back({t.start, +1});
      else if (a.kind == ActionKind::W || a.kind == ActionKind::BW)
        events.push_back({t.end, -1});
    }
    llvm::sort(events);
    int64_t count = 0;
    for (auto [time, delta] : events)
      peaks[r] = std::max(peaks[r], count += delta);
  }
  return peaks;
}

llvm::Expected<Simulation> Simulator::run() {
  if (llvm::Error e = check())
    return std::move(e);
  Simulation sim;
  sim.times.resize(p);
  std::vector<size_t> next(p, 0);
  std::vector<double> freeAt(p, 0), busy(p, 0);
  size_t left = 0;
  for (int64_t r = 0; r < p; ++r) {
    sim.times[r].resize(schedule.actions[r].size());
    left += schedule.actions[r].size();
  }
  while (left > 0) {
    bool progress = false;
    for (int64_t r = 0; r < p; ++r) {
      for (; next[r] < schedule.actions[r].size(); ++next[r], --left) {
        const Action &a = schedule.actions[r][next[r]];
        double start = freeAt[r];
        bool ready = true;
        for (const Action &d : dependencies(a)) {
          double e = end[int(d.kind)][key(d)];
          ready = ready && e >= 0;
          start = std::max(start, e);
        }
        if (!ready)
          break;
        double stop = start + cost(a);
        sim.times[r][next[r]] = {start, stop};
        end[int(a.kind)][key(a)] = stop;
        freeAt[r] = stop;
        busy[r] += cost(a);
        progress = true;
      }
    }
    if (!progress)
      return deadlock(next);
  }
  sim.makespan = *llvm::max_element(freeAt);
  double total = 0;
  for (double b : busy)
    total += b;
  sim.bubbleFraction =
      sim.makespan > 0 ? 1 - total / (double(p) * sim.makespan) : 0;
  sim.peakInFlight = peakInFlight(sim);
  return sim;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public interface
//===----------------------------------------------------------------------===//

llvm::Expected<ScheduleKind> pipeline::parseScheduleKind(llvm::StringRef name) {
  std::optional<ScheduleKind> kind =
      llvm::StringSwitch<std::optional<ScheduleKind>>(name)
          .Case("gpipe", ScheduleKind::GPipe)
          .Case("1f1b", ScheduleKind::OneFOneB)
          .Cases({"interleaved", "interleaved-1f1b"}, ScheduleKind::Interleaved)
          .Cases({"zb-h1", "zbh1", "zero-bubble"}, ScheduleKind::ZeroBubbleH1)
          .Default(std::nullopt);
  if (!kind)
    return fail("unknown pipeline schedule '" + name +
                "'; expected gpipe, 1f1b, interleaved or zb-h1");
  return *kind;
}

llvm::StringRef pipeline::scheduleName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::GPipe:
    return "gpipe";
  case ScheduleKind::OneFOneB:
    return "1f1b";
  case ScheduleKind::Interleaved:
    return "interleaved";
  case ScheduleKind::ZeroBubbleH1:
    return "zb-h1";
  }
  llvm_unreachable("unknown schedule kind");
}

llvm::Error pipeline::checkScheduleOptions(const ScheduleOptions &o) {
  llvm::StringRef name = scheduleName(o.kind);
  if (o.ranks < 2)
    return fail("a schedule needs a pipeline axis of 2 or more ranks; got " +
                llvm::Twine(o.ranks));
  if (o.microbatches < 1)
    return fail("a schedule needs 1 or more microbatches; got " +
                llvm::Twine(o.microbatches));
  if (o.kind != ScheduleKind::Interleaved) {
    if (o.virtualStages != 1)
      return fail(name + " runs one stage per rank; got " +
                  llvm::Twine(o.virtualStages) +
                  " virtual stages (use interleaved for more)");
    return llvm::Error::success();
  }
  if (o.virtualStages < 2)
    return fail("interleaved needs 2 or more virtual stages per rank; got " +
                llvm::Twine(o.virtualStages) + " (use 1f1b for one)");
  if (o.microbatches % o.ranks != 0) {
    // The nearest multiples: "4 or 8" for 6 on 4 ranks, "4" for 3.
    int64_t below = o.microbatches / o.ranks * o.ranks;
    std::string use = std::to_string(below + o.ranks);
    if (below > 0)
      use = std::to_string(below) + " or " + use;
    return fail("interleaved needs microbatches to be a multiple of the "
                "pipeline ranks (" +
                llvm::Twine(o.ranks) + "); got " + llvm::Twine(o.microbatches) +
                " (use " + use + ")");
  }
  return llvm::Error::success();
}

std::string pipeline::actionName(const Action &a) {
  return (kindLetters(a.kind) + llvm::Twine(a.stage) + "." +
          llvm::Twine(a.microbatch))
      .str();
}

llvm::Expected<Schedule> pipeline::buildSchedule(const ScheduleOptions &o) {
  if (llvm::Error e = checkScheduleOptions(o))
    return std::move(e);
  Schedule s;
  s.options = o;
  if (o.kind == ScheduleKind::ZeroBubbleH1) {
    auto actions = ZeroBubbleH1Builder(o).build();
    if (!actions)
      return actions.takeError();
    s.actions = std::move(*actions);
    return s;
  }
  for (int64_t r = 0; r < o.ranks; ++r) {
    switch (o.kind) {
    case ScheduleKind::GPipe:
      s.actions.push_back(gpipeRank(o, r));
      break;
    case ScheduleKind::OneFOneB:
      s.actions.push_back(oneFOneBRank(o, r));
      break;
    default:
      s.actions.push_back(interleavedRank(o, r));
      break;
    }
  }
  return s;
}

llvm::Expected<Simulation> pipeline::simulate(const Schedule &schedule,
                                              const Costs &costs) {
  return Simulator(schedule, costs).run();
}

void pipeline::printGantt(const Schedule &schedule,
                          const Simulation &simulation, llvm::raw_ostream &os) {
  size_t nameWidth = 1;
  for (const std::vector<Action> &rank : schedule.actions)
    for (const Action &a : rank)
      nameWidth = std::max(nameWidth, actionName(a).size());
  size_t width = nameWidth + 1;
  int64_t cells = int64_t(std::ceil(simulation.makespan - 1e-9));
  int64_t ranks = int64_t(schedule.actions.size());
  size_t label = std::string("rank ").size() +
                 std::to_string(std::max<int64_t>(ranks - 1, 0)).size();
  os << llvm::left_justify("time", label) << " |";
  for (int64_t t = 0; t < cells; ++t)
    os << llvm::left_justify(std::to_string(t), width);
  os << "\n";
  for (int64_t r = 0; r < ranks; ++r) {
    // A cell shows the action running in its middle: its name in the first
    // cell, '=' in the following ones; '.' when the rank is idle.
    std::vector<std::string> row(cells, ".");
    for (auto [a, t] : llvm::zip(schedule.actions[r], simulation.times[r])) {
      std::string name = actionName(a);
      bool first = true;
      for (int64_t c = std::max<int64_t>(0, int64_t(std::floor(t.start)));
           c < cells && c < t.end; ++c) {
        if (c + 0.5 < t.start || c + 0.5 >= t.end)
          continue;
        row[c] = first ? name : std::string(name.size(), '=');
        first = false;
      }
    }
    os << llvm::left_justify("rank " + std::to_string(r), label) << " |";
    for (const std::string &cell : row)
      os << llvm::left_justify(cell, width);
    os << "\n";
  }
}

double pipeline::textbookBubble(int64_t ranks, int64_t microbatches) {
  return double(ranks - 1) / double(microbatches + ranks - 1);
}
