//===- Schedule.h - Pipeline schedules: generate, verify, simulate -*- C++ -*-===//
//
// A pipeline schedule is, for every rank of the pipeline axis, the ordered
// list of actions it runs in one optimizer step: the forward (F), the
// backward to the stage's input (B) and the backward to its weights (W) of
// microbatch i on (virtual) stage k. Virtual stage k runs on rank
// k % ranks. Schedules without a separate W (gpipe, 1f1b, interleaved) run
// B and W as one action (kind BW).
//
// This header has no MLIR dependency: the split pass, the reports and the
// unit tests share it.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PIPELINE_SCHEDULE_H
#define TESSEL_PIPELINE_SCHEDULE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::pipeline {

enum class ScheduleKind { GPipe, OneFOneB, Interleaved, ZeroBubbleH1 };

/// What a pipeline step runs: the schedule, `ranks` along the pipeline axis,
/// `virtualStages` stages per rank (interleaved only; 1 otherwise) and
/// `microbatches` per optimizer step.
struct ScheduleOptions {
  ScheduleKind kind = ScheduleKind::OneFOneB;
  int64_t ranks = 1;
  int64_t virtualStages = 1;
  int64_t microbatches = 1;

  int64_t stages() const { return ranks * virtualStages; }
  /// Whether W runs as its own action (zero-bubble schedules).
  bool splitsWeightGradient() const {
    return kind == ScheduleKind::ZeroBubbleH1;
  }
};

/// gpipe | 1f1b | interleaved | zb-h1 (also zbh1, zero-bubble).
llvm::Expected<ScheduleKind> parseScheduleKind(llvm::StringRef name);
llvm::StringRef scheduleName(ScheduleKind kind);

/// Refuses option combinations no schedule runs, with a message naming what
/// to change (e.g. interleaved needs microbatches % ranks == 0 and
/// virtualStages >= 2; a schedule on one rank; zero microbatches).
llvm::Error checkScheduleOptions(const ScheduleOptions &options);

enum class ActionKind { F, B, W, BW };

struct Action {
  ActionKind kind;
  int64_t stage;      ///< virtual stage, 0 .. stages()-1
  int64_t microbatch; ///< 0 .. microbatches-1
  bool operator==(const Action &o) const {
    return kind == o.kind && stage == o.stage && microbatch == o.microbatch;
  }
};

/// "F3.1": kind, stage, microbatch (the trace span and Gantt cell name).
std::string actionName(const Action &a);

struct Schedule {
  ScheduleOptions options;
  /// actions[r]: what rank r runs, in order.
  std::vector<std::vector<Action>> actions;
};

/// The schedule `options` describe (checked with checkScheduleOptions).
llvm::Expected<Schedule> buildSchedule(const ScheduleOptions &options);

/// Unit costs for the simulation: F, B and W take these many time units
/// (BW takes b + w). Point-to-point transfers take no time.
struct Costs {
  double f = 1, b = 1, w = 1;
};

struct Timing {
  double start = 0, end = 0;
};

/// What the simulation of a schedule gives.
struct Simulation {
  double makespan = 0;
  /// 1 - (busy time of all ranks) / (ranks * makespan).
  double bubbleFraction = 0;
  /// Per rank: the most microbatches whose forward has run on one of its
  /// stages and whose last backward (W or BW) has not: the activations it
  /// keeps.
  std::vector<int64_t> peakInFlight;
  /// times[r][j]: when actions[r][j] runs.
  std::vector<std::vector<Timing>> times;
};

/// Checks that every microbatch passes every stage exactly once per kind
/// and in dependency order (F(k,i) after F(k-1,i); B(k,i) after B(k+1,i)
/// and F(k,i); W(k,i) after B(k,i)), that each stage's actions run on rank
/// stage % ranks, and simulates it with `costs`: a rank runs its next action
/// as soon as the actions it depends on have ended. A rank waiting on an
/// action that can never run is a deadlock, reported with the ranks and
/// actions involved.
llvm::Expected<Simulation> simulate(const Schedule &schedule,
                                    const Costs &costs = Costs());

/// The Gantt chart as text, one row per rank, one column per time unit
/// (each cell the action's name padded, '.' idle), as in the figures of
/// pipeline papers.
void printGantt(const Schedule &schedule, const Simulation &simulation,
                llvm::raw_ostream &os);

/// Textbook bubble fraction (p - 1) / (m + p - 1) of GPipe and 1F1B.
double textbookBubble(int64_t ranks, int64_t microbatches);

} // namespace tessel::pipeline

#endif // TESSEL_PIPELINE_SCHEDULE_H
