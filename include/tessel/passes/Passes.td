//===- Passes.td - tessel passes ---------------------------*- tablegen -*-===//

#ifndef TESSEL_PASSES_PASSES_TD
#define TESSEL_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def TesselStripShardingsPass : Pass<"tessel-strip-shardings", "ModuleOp"> {
  let summary = "Removes every sharding annotation and sharding constraint";
  let description = [{
    Turns an annotated program into the plain single-device program:
    `tessel.sharding` attributes on function arguments, results and ops are
    dropped and each `tessel.sharding_constraint` is replaced by its operand.
    Meshes are kept unless `remove-meshes` is set (and nothing else refers to
    them). Differential tests use it to build the unsharded reference.
  }];
  let options = [
    Option<"removeMeshes", "remove-meshes", "bool", /*default=*/"false",
           "Also erase tessel.mesh ops that no op refers to any more">
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect"];
}

def TesselApplyRulesPass : Pass<"tessel-apply-rules", "ModuleOp"> {
  let summary = "Turns logical axis names into shardings by a rules file";
  let description = [{
    Reads logical-axis rules, as MaxText and T5X users write them
    (`{"batch": "dp", "mlp": "tp", "heads": "tp", "embed": null}`), and turns
    every `tessel.logical_axes` tag into a sharding on the mesh: a closed
    `tessel.sharding` on function arguments and results that have none yet,
    and a `tessel.sharding_constraint` after each tagged op (unmapped
    dimensions open, for propagation to fill). Give either `rules=FILE` or
    `strategy=NAME` (a built-in: dp, fsdp, tp, tp-sp, dp-tp, dp-tp-sp,
    fsdp-tp; `tessel-models --print-strategy NAME` shows one).
  }];
  let options = [
    Option<"rulesFile", "rules", "std::string", /*default=*/"",
           "JSON file mapping logical axis names to mesh axes">,
    Option<"strategy", "strategy", "std::string", /*default=*/"",
           "Name of a built-in strategy">,
    Option<"meshName", "mesh", "std::string", /*default=*/"",
           "Mesh to shard on (default: the module's only tessel.mesh)">
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect"];
}

#endif // TESSEL_PASSES_PASSES_TD
