//===- PlanFile.cpp - a plan as tessel-compile options --------------------===//

#include "tessel/planning/PlanFile.h"

#include "tessel/support/Json.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::tessel::planning;

namespace {

/// The built-in strategies' rules (rules/*.json), composed: batch over dp;
/// heads, MLP and vocabulary over tp; with sp the sequence of activations
/// over tp too; the ZeRO stage as optimizer-state, gradient or parameter
/// sharding over dp.
llvm::json::Object rulesFor(const Plan &plan) {
  llvm::json::Object r{{"batch", "dp"}, {"act_batch", "dp"}};
  if (plan.ep > 1) { // the dp-ep strategy: experts over ep, within dp
    r["batch"] = llvm::json::Array{"dp", "ep"};
    r["act_batch"] = llvm::json::Array{"dp", "ep"};
    r["expert"] = "ep";
    r["expert_batch"] = "dp";
  }
  if (plan.tp > 1)
    for (const char *axis : {"heads", "kv_heads", "mlp", "vocab"})
      r[axis] = "tp";
  if (plan.sequenceParallel)
    r["act_seq"] = "tp";
  if (plan.zero == 1 || plan.zero == 2)
    r["optimizer_state"] = llvm::json::Object{{"embed", "dp"}};
  if (plan.zero == 2)
    r["shard_gradients"] = true;
  if (plan.zero >= 3)
    r["embed"] = llvm::json::Object{{"axes", "dp"}, {"priority", 2}};
  return r;
}

} // namespace

CompileOptions mlir::tessel::planning::compileOptions(const Plan &plan) {
  CompileOptions o;
  o.mesh = plan.ep > 1 ? llvm::formatv("dp={0},ep={1},tp={2}",
                                       plan.dp / plan.ep, plan.ep, plan.tp)
                             .str()
                       : llvm::formatv("dp={0},tp={1}", plan.dp, plan.tp).str();
  if (plan.pp > 1)
    o.mesh += llvm::formatv(",pp={0}", plan.pp).str();
  o.rules = llvm::formatv("{0}", llvm::json::Value(rulesFor(plan))).str();
  if (plan.pp > 1) {
    o.pipeline = llvm::formatv("schedule={0} microbatches={1} axis=pp",
                               plan.schedule, plan.microbatches)
                     .str();
    if (plan.virtualStages > 1)
      o.pipeline += llvm::formatv(" virtual={0}", plan.virtualStages).str();
  }
  if (plan.recompute == "layers")
    o.optimizerOptions = "recompute=layers";
  else if (plan.recompute == "selective")
    o.optimizerOptions = "recompute=tagged";
  o.modelBatch = plan.dp * plan.microBatchSize;
  o.globalBatch = plan.dp * plan.microBatchSize * plan.microbatches;
  o.accumulate = plan.pp == 1 && plan.microbatches > 1;
  return o;
}

llvm::json::Value mlir::tessel::planning::planToJson(
    const Estimate &e, const ModelProfile &model, llvm::StringRef hardware) {
  CompileOptions o = compileOptions(e.plan);
  const Plan &p = e.plan;
  auto gib = [](double bytes) { return bytes / double(1ull << 30); };
  return llvm::json::Object{
      {"tessel_plan", 1},
      {"plan", p.describe()},
      {"hardware", hardware},
      {"degrees",
       llvm::json::Object{
           {"dp", p.dp}, {"tp", p.tp}, {"pp", p.pp}, {"ep", p.ep}}},
      {"sequence_parallel", p.sequenceParallel},
      {"zero", p.zero},
      {"microbatches", p.microbatches},
      {"micro_batch_size", p.microBatchSize},
      {"recompute", p.recompute},
      {"schedule", p.pp > 1 ? p.schedule : ""},
      {"mesh", o.mesh},
      {"rules", *llvm::json::parse(o.rules)},
      {"pipeline", o.pipeline},
      {"optimizer_options", o.optimizerOptions},
      {"model_batch", o.modelBatch},
      {"global_batch", o.globalBatch},
      {"accumulate", o.accumulate},
      {"predicted",
       llvm::json::Object{{"memory_gib", gib(e.memory.total())},
                          {"memory_bytes",
                           llvm::json::Object{
                               {"weights", e.memory.weights},
                               {"gradients", e.memory.gradients},
                               {"optimizer", e.memory.optimizer},
                               {"activations", e.memory.activations},
                               {"working", e.memory.working}}},
                          {"memory_bytes_compiled", e.compiledMemory},
                          {"memory_bytes_compiled_by_stage",
                           llvm::json::Array(e.compiledMemoryByStage)},
                          {"step_seconds", e.time.total()},
                          {"step_seconds_by_part",
                           llvm::json::Object{{"compute", e.time.compute},
                                              {"tp", e.time.tp},
                                              {"pp", e.time.pp},
                                              {"ep", e.time.ep},
                                              {"dp", e.time.dp},
                                              {"bubble", e.time.bubble}}},
                          {"mfu", e.mfu},
                          {"verified", e.load.measured},
                          {"parameters", model.parameters}}}};
}

llvm::Expected<CompileOptions>
mlir::tessel::planning::readPlanFile(llvm::StringRef path) {
  llvm::Expected<llvm::json::Value> json = ::tessel::readJsonFile(path);
  if (!json)
    return llvm::createStringError("--plan: " +
                                   llvm::toString(json.takeError()));
  const llvm::json::Object *o = json->getAsObject();
  if (!o || o->getInteger("tessel_plan") != 1)
    return llvm::createStringError(
        "--plan " + path +
        ": not a plan of this Tessel (tessel-plan --emit writes one)");
  CompileOptions c;
  auto text = [&](llvm::StringRef key) {
    auto v = o->getString(key);
    return v ? v->str() : std::string();
  };
  c.mesh = text("mesh");
  c.pipeline = text("pipeline");
  c.optimizerOptions = text("optimizer_options");
  const llvm::json::Value *rules = o->get("rules");
  if (c.mesh.empty() || !rules || !rules->getAsObject())
    return llvm::createStringError("--plan " + path +
                                   ": the plan needs \"mesh\" and \"rules\"");
  c.rules = llvm::formatv("{0}", *rules).str();
  c.modelBatch = o->getInteger("model_batch").value_or(1);
  c.globalBatch = o->getInteger("global_batch").value_or(c.modelBatch);
  c.accumulate = o->getBoolean("accumulate").value_or(false);
  return c;
}
