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

#endif // TESSEL_PASSES_PASSES_TD
