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

def TesselInferenceModePass : Pass<"tessel-inference-mode", "ModuleOp"> {
  let summary = "Turns functions into their evaluation form: no dropout";
  let description = [{
    In the named functions (all public functions when none are named),
    every `tessel.dropout_mask` becomes a splat of ones, as PyTorch's
    `model.eval()` switches dropout off. `tessel-compile --eval F` runs it
    on F after building the train step from the same forward, so training
    keeps its dropout and evaluations see the whole model. A seed argument
    that nothing reads any more stays (the runtime still sets it).
  }];
  let options = [
    Option<"functions", "functions", "std::string", /*default=*/"\"\"",
           "Comma-separated function names (default: every public function)">
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect"];
}

def TesselLogitsPass : Pass<"tessel-logits", "ModuleOp"> {
  let summary = "Adds a function returning a model's logits";
  let description = [{
    Clones `func` (a forward whose loss is one `tessel.softmax_cross_entropy`)
    as `<func>_logits`, which returns that op's logits operand, named
    `logits`, instead of the forward's results; what only the loss needed is
    removed, and an argument nothing reads any more (the labels) stays.
    `tessel-generate` samples text from it.
  }];
  let options = [
    Option<"func", "func", "std::string", /*default=*/"\"forward\"",
           "The forward function">
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
    dimensions open, for propagation to fill; mapped ones at priority p1, so
    that parameters and data propagate first). Give either `rules=FILE` or
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

def TesselPropagatePass : Pass<"tessel-propagate", "ModuleOp"> {
  let summary = "Gives every value a sharding (GSPMD/Shardy-style propagation)";
  let description = [{
    Propagates the user's shardings (function arguments and results,
    `tessel.sharding_constraint`, and `tessel.sharding` already on ops) to
    every value of every function, through each op's sharding rule, to a
    fixed point. It:
      * never changes a closed user dimension, and only extends open ones;
      * propagates user priorities in order (p0 first; a dimension without a
        priority ranks as p0), and within each priority first through
        pointwise ops, then through the rest (broadcasts, contractions,
        reductions...);
      * resolves conflicting candidates for a factor by priority, then by
        keeping the larger tensor's sharding, then by operand order;
      * never uses a mesh axis twice in one tensor, and never shards a
        need-replication factor.
    The result is a `tessel.sharding` on every op result, function argument
    and function result (values nothing reaches are replicated, open).
    Function calls must be inlined first (`--inline`). With `explain`, it
    prints for each value its sharding and where each dimension came from,
    and for each conflict which side won and why.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Print each value's sharding, its origin, and every conflict">
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect"];
}

def TesselAutoShardPass : Pass<"tessel-auto-shard", "ModuleOp"> {
  let summary = "Chooses every op's sharding on a mesh by an integer program";
  let description = [{
    For a function with few or no sharding annotations (`func=NAME`,
    default `forward`), chooses the sharding of every argument, op result
    and returned value on the mesh `mesh=dp:4,tp:2` (created as `@mesh`
    where the module has no mesh of that name; without `mesh=`, the
    module's only mesh) by an integer program solved with COIN-OR CBC
    (Alpa's intra-operator formulation): each op's strategies are the ways
    to put the mesh axes on the factors of its sharding rule; the objective
    is the predicted time of a training step (`training=false`: of the
    function as written): matmul FLOPs at the device rate, other ops by the
    bytes they touch, the all-reduces of partial results and of partial
    gradients, and every resharding between a producer and a consumer at
    the bytes the partitioner's reshard planner sends; `memory=24GiB`
    bounds the bytes per device (parameters with their gradients and
    optimizer state plus every kept activation; `training=false`: the
    arguments plus each op's operands and results). User annotations are
    constraints. The choice is written as ordinary annotations (closed
    shardings on arguments, results and ops, and a sharding_constraint
    where an op takes an operand in another layout), so propagation and
    partitioning run unchanged. `report=true` prints the predicted time,
    memory and each matmul's layout. See docs/planning.md.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"forward\"",
           "The function to shard">,
    Option<"meshSpec", "mesh", "std::string", /*default=*/"\"\"",
           "Mesh axes, e.g. dp:4,tp:2 (default: the module's mesh)">,
    Option<"memory", "memory", "std::string", /*default=*/"\"\"",
           "Per-device memory limit, e.g. 24GiB, 512MiB, 8e9 (default: none)">,
    Option<"training", "training", "bool", /*default=*/"true",
           "Cost a training step (backward, gradients, optimizer state)">,
    Option<"optimizerSlots", "optimizer-slots", "double", /*default=*/"2",
           "Optimizer state tensors per parameter (AdamW: 2, SGD: 1)">,
    Option<"matmulTflops", "matmul-tflops", "double", /*default=*/"544.2",
           "Matmul rate per device in TFLOP/s (H100 bf16 x 0.55)">,
    Option<"memoryGbps", "memory-gbytes-per-s", "double",
           /*default=*/"3350", "Device memory bandwidth in GB/s">,
    Option<"linkGbps", "link-gbytes-per-s", "double", /*default=*/"450",
           "Bytes per second one device sends, in GB/s (NVLink 4)">,
    Option<"linkLatencyUs", "link-latency-us", "double", /*default=*/"5",
           "Latency per collective in microseconds">,
    Option<"hostGbps", "host-gbytes-per-s", "double", /*default=*/"25",
           "Host-to-device rate for data arguments in GB/s (PCIe 4 x16)">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"60",
           "Solver time limit in seconds">,
    Option<"maxPairs", "max-pairs", "int64_t", /*default=*/"250000",
           "Largest joint problem (edge pair variables); above it the mesh "
           "axes are chosen one at a time, largest first">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the choice to standard output">
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect"];
}

def TesselPartitionPass : Pass<"tessel-partition", "ModuleOp"> {
  let summary = "Rewrites propagated global functions into per-device programs";
  let description = [{
    Turns every function whose values carry shardings (run
    `--tessel-propagate` first) into a per-device SPMD program on local
    shapes, marked `tessel.spmd = @mesh`; arguments and results keep their
    global layout as `tessel.sharding` (and `tessel.global_type` where a
    dimension is padded). Each op becomes its local op by its sharding rule;
    a sharded reduction factor leaves a partial value. Where an operand's
    layout differs from what its user needs, the reshard planner emits
    collectives: all-reduce (or reduce-scatter when the consumer splits the
    same axes) for partial values, all-gather for dropped axes, a local
    slice by `axis_index` for added axes (no communication), all-to-all for
    an axis moving between dimensions. Uneven dimensions are padded; padding
    is masked to the identity before reductions and contractions.
  }];
  let options = [
    Option<"strict", "strict", "bool", /*default=*/"false",
           "Make reshards that need a full rematerialization errors">
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect",
                           "::mlir::func::FuncDialect"];
}

def TesselCommReportPass : Pass<"tessel-comm-report", "ModuleOp"> {
  let summary = "Lists every collective of the per-device programs and its cost";
  let description = [{
    For each `tessel.spmd` function, prints (to standard output) every
    collective with its axes, group size, element count, and the bytes each
    device sends per call under ring algorithms: all-reduce 2(n-1)/n B;
    all-gather, reduce-scatter and all-to-all (n-1)/n B (B the larger of the
    input and output buffers); collective-permute and send B. Then totals
    per kind and per function. `format=json` prints one JSON document.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "text or json">
  ];
}

def TesselMemoryReportPass : Pass<"tessel-memory-report", "ModuleOp"> {
  let summary = "Estimates each function's memory by liveness in program order";
  let description = [{
    For each function (`func=NAME` for one), prints to standard output the
    bytes of its arguments (parameters, optimizer state, data: per device in
    a `tessel.spmd` function), the peak bytes of the values it computes when
    each is freed after its last use in program order, and, in a training
    step, the bytes live right before the first backward op (role
    `backward_input`, `backward_weight` or `recompute`; after the last
    `tessel.role = "forward"` op where there is none): the activations kept
    for the backward, which recomputation trades for compute; and, where it
    differs from the peak, the peak before the first optimizer op (the
    runtime updates parameters and state in place, so the update's new
    values do not add to what a step needs). The numbers are those
    tessel-plan reads (tessel/planning/ProgramCosts.h). `format=json`
    prints one JSON document.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"\"",
           "Only this function (default: every function)">,
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "text or json">
  ];
}

def TesselOptimizeCollectivesPass
    : Pass<"tessel-optimize-collectives", "ModuleOp"> {
  let summary = "Combines, folds and cancels collectives without changing results";
  let description = [{
    On per-device (`tessel.spmd`) functions:
      * all-reduces, all-gathers, reduce-scatters, all-to-alls and
        shard_slices over a group of one device (axes of size 1, such as
        the "dp"=1 of a pipeline stage's mesh) are their operands;
      * an all-reduce whose only use takes this device's block along one
        dimension over the same axes becomes a reduce-scatter;
      * an all-gather followed by taking this device's block over the same
        axes and dimension cancels (the block is the all-gather's operand);
      * all-reduces (sum, same mesh, axes and element type) of at most
        `bucket-bytes` each, with no use of one between them, are combined
        into one all-reduce of their concatenation (gradient bucketing);
      * adds (each used once, by the next) summing several sum all-reduces
        of one group become one all-reduce of the sum (the global norm's
        partial squares under ZeRO-2/3; the terms are reassociated, so the
        last bits may differ);
      * collectives whose results are unused are removed.
    The differential tests run with and without this pass.
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t",
           /*default=*/"::mlir::tessel::kGradientBucketBytes",
           "Largest all-reduce (bytes per device) that is bucketed">
  ];
}

def TesselGradPass : Pass<"tessel-grad", "ModuleOp"> {
  let summary = "Adds the reverse-mode gradient of a loss function";
  let description = [{
    For `func=NAME` (default `forward`), whose first result is a scalar
    float loss, adds `@NAME_grad(args...) -> (loss, d loss / d arg for every
    float argument)` (results named `loss` and `grad.<argument name>`),
    built from each op's vector-Jacobian product (VjpOpInterface).
    The training-step builder uses the same machinery.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"forward\"",
           "The loss function to differentiate">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"none\"",
           "Recompute activations in the backward: none | layers (ops tagged "
           "tessel.layer) | tagged (regions tagged tessel.recompute)">,
    Option<"reshardAfterForward", "reshard-after-forward", "bool",
           /*default=*/"true",
           "The backward reads split parameters afresh, so FSDP/ZeRO-3 "
           "gathers them again instead of keeping them live">
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect"];
}

def TesselTrainStepPass : Pass<"tessel-train-step", "ModuleOp"> {
  let summary = "Builds a training step (forward, backward, optimizer update)";
  let description = [{
    From `@FUNC(params..., batch...) -> loss` adds `@train_step(params...,
    opt_state..., batch..., step) -> (new params..., new opt_state..., loss,
    grad_norm)`: reverse-mode gradients (as --tessel-grad), the global
    gradient norm with optional clipping, a learning-rate schedule (linear
    warm-up then cosine decay, from `step`) and an SGD-with-momentum or AdamW
    update (bias correction, decoupled weight decay on parameters of rank >= 2
    only). Parameters are the float arguments without a "batch" logical axis
    that are not listed in `batch`; optimizer state is in master precision
    (f32; f64 for f64 parameters) and carries its
    parameter's sharding, so partitioning the step partitions the update.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"forward\"",
           "The loss function to train">,
    Option<"stepName", "name", "std::string", /*default=*/"\"train_step\"",
           "Name of the generated function">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "adamw | sgd">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "Peak learning rate">,
    Option<"warmup", "warmup", "int64_t", /*default=*/"0",
           "Linear warm-up steps">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"0",
           "Cosine decay ends here (0: constant after warm-up)">,
    Option<"minLrRatio", "min-lr-ratio", "double", /*default=*/"0.1",
           "Final learning rate as a fraction of lr">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9", "SGD momentum">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Decoupled weight decay (parameters of rank >= 2)">,
    Option<"decayEmbeddings", "decay-embeddings", "bool", /*default=*/"true",
           "Decay embedding tables (the tables of gathers) too; false "
           "leaves them out">,
    Option<"clipNorm", "clip-norm", "double", /*default=*/"0.0",
           "Global gradient-norm clipping threshold (0: off)">,
    Option<"accumulate", "accumulate", "bool", /*default=*/"false",
           "Gradient accumulation: an accum slot per parameter and scalar "
           "arguments 'apply' and 'grad_scale' (micro-steps add to the sum; "
           "the step with apply != 0 updates with sum * grad_scale)">,
    Option<"lrArgument", "lr-argument", "bool", /*default=*/"false",
           "Take the peak learning rate from an f32 argument 'lr' (before "
           "'step', initialized to constant:lr) instead of a constant">,
    ListOption<"batchNames", "batch", "std::string",
               "Float arguments (by tessel.name) that are data, not parameters">,
    Option<"computeType", "compute-type", "std::string", /*default=*/"\"\"",
           "Mixed precision: compute in bf16 or f16, keeping parameters, "
           "optimizer state, softmax, norms and the loss in f32">,
    Option<"saveF32Activations", "save-f32-activations", "bool",
           /*default=*/"false",
           "With compute-type: keep the f32 values the backward reads (softmax "
           "probabilities, norm inputs) live instead of reading them from "
           "their compute-type copies (twice the activation memory)">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"none\"",
           "Recompute activations in the backward: none | layers (ops tagged "
           "tessel.layer) | tagged (regions tagged tessel.recompute)">,
    Option<"reshardAfterForward", "reshard-after-forward", "bool",
           /*default=*/"true",
           "The backward reads split parameters afresh, so FSDP/ZeRO-3 "
           "gathers them again instead of keeping them live">
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect"];
}

def TesselAssignStagesPass : Pass<"tessel-assign-stages", "ModuleOp"> {
  let summary = "Tags a forward function's ops with their pipeline stage";
  let description = [{
    Groups the layers of `func` (ops tagged `tessel.layer`) into `stages`
    contiguous pipeline stages and tags every op with `tessel.stage`:
    `boundaries=auto` balances estimated FLOPs (the embedding counts with the
    first stage, the head and loss with the last), `boundaries=0,3,6` gives
    each stage's first layer, `boundaries=tags` keeps the model's own tags
    (and checks that none goes backwards). Untagged ops take the latest
    stage of their operands; ops that read no staged value stay untagged.
    The train step's backward and update inherit the tags
    (docs/pipelines.md).
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"forward\"",
           "The function to tag">,
    Option<"stages", "stages", "int64_t", /*default=*/"2",
           "Number of stages (pipeline ranks x virtual stages)">,
    Option<"boundaries", "boundaries", "std::string", /*default=*/"\"auto\"",
           "auto | tags | the first layer of each stage, as 0,3,6">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Print each stage's layers and estimated cost">
  ];
}

def TesselPipelineSplitPass : Pass<"tessel-pipeline-split", "ModuleOp"> {
  let summary = "Splits a partitioned train step into pipeline stage functions";
  let description = [{
    For a per-device function `func` whose mesh has the pipeline axis `axis`
    (of P ranks): adds a sub-mesh `@<mesh>_<axis><r>` and a function
    `@<func>_<axis><r>` for every rank r, runs the `schedule` (gpipe, 1f1b,
    interleaved, zb-h1) over `microbatches` microbatches unrolled in each,
    with `tessel.send`/`tessel.recv` over the axis for every value that
    crosses ranks, then removes `func`. Token batches gain a leading
    microbatch dimension; gradients are summed over microbatches and scaled
    by 1/m, and their data-parallel reductions run once per step
    (docs/pipelines.md).
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"train_step\"",
           "The partitioned train step">,
    Option<"axis", "axis", "std::string", /*default=*/"\"pp\"",
           "The mesh axis the stages are spread over">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "gpipe | 1f1b | interleaved | zb-h1">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Microbatches per optimizer step">,
    Option<"virtualStages", "virtual", "int64_t", /*default=*/"1",
           "Stages per rank (interleaved)">
  ];
}

def TesselPipelineReportPass : Pass<"tessel-pipeline-report", "ModuleOp"> {
  let summary = "Prints a split pipeline's schedule, bubble and traffic";
  let description = [{
    For a module split by --tessel-pipeline-split: the schedule as a text
    Gantt chart (one row per rank, unit costs F = B = W = 1), the bubble
    fraction the simulation predicts (and (p-1)/(m+p-1) for comparison), the
    most microbatches whose activations each rank keeps at once, and the
    bytes each rank sends per step over the pipeline axis. With `costs=F,B,W`
    (the measured times of a forward, a backward-input and a backward-weight
    action; a fused backward costs B + W) it also simulates those costs:
    the bubble to compare with one measured from a --trace
    (bench/pipeline/).
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "text or json">,
    ListOption<"costs", "costs", "double",
               "Also simulate with these costs of F, B and W">
  ];
}

def TesselLowerToLinalgPass : Pass<"tessel-lower-to-linalg", "ModuleOp"> {
  let summary = "Lowers per-device programs to linalg/tensor/arith/math and the target's calls";
  let description = [{
    The first step of every backend. Every tessel op becomes linalg on
    tensors (element-wise ops, broadcasts and transposes as parallel
    linalg.generic ops that fuse), tensor view ops (reshape, slice,
    concatenate, pad), reductions and short sequences for softmax, the norms
    and cross-entropy (statistics in f32 for 16-bit floats), the same for
    every target. The target (tessel/lowering/Target.h) lowers the rest:
    for `cpu`, dot_general becomes a call to `tessel_rt_gemm_*` (OpenBLAS),
    collectives, send, recv and axis_index calls into libtessel_rt
    (runtime/Abi.h) naming their communicator group. A collective with
    compute between it and the first op that reads its result or
    communicates is split into a start and a wait there (overlap), for
    every target. Afterwards the meshes and tessel attributes are dropped.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "The backend that lowers matmuls and communication (registered "
           "in tessel/lowering/Target.h)">,
    Option<"overlapCollectives", "overlap-collectives", "bool",
           /*default=*/"true",
           "Split each collective into a start and a wait before the first "
           "op that reads its result or communicates, so that the program "
           "computes while it is in flight (runtime/Abi.h)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"];
}

#endif // TESSEL_PASSES_PASSES_TD
