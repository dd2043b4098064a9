//===- Program.h - the description of a compiled program --------*- C++ -*-===//
//
// The one contract between the compiler and what runs its output: which
// entry points a program has, the meshes they run on, and for every argument
// and result its name, type, layout, initialization and *role* (what the
// runtime does with it). tessel-compile writes it (embedded in the
// executable as the `tessel_program` symbol of runtime/Abi.h), the runtime
// and the tools read it, and `validateProgram` checks everything a reader
// relies on, so a damaged or foreign description is refused with a message
// instead of misbehaving. No MLIR dependency: the runtime links it.
//
// JSON (version 3; docs/architecture.md has the field-by-field contract):
//
//   {"version": 3,
//    "meshes": [{"name": "mesh", "axes": ["dp", "tp"], "sizes": [2, 2],
//                "devices": [0, 1, 2, 3]}],
//    "groups": [{"mesh": "mesh", "axes": ["dp"]}, ...],
//    "entries": [{"name": "train_step", "symbol": "tessel_entry_0",
//                 "mesh": "mesh", "groups": [0],
//                 "arguments": [{"name": "wte.weight", "role": "parameter",
//                                "dtype": "f32", "shape": [64, 128],
//                                "global_shape": [128, 128],
//                                "dims": [["tp"], []],
//                                "init": "normal:0.02"}, ...],
//                 "results": [ same fields but "init" ]}],
//    "target": {"triple": ..., "cpu": ..., "requested": ..., "features": []}}
//
// "shape" is the per-device block: each dimension is ceil(global / devices
// splitting it); the padding of uneven dimensions is zero on input.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PROGRAM_PROGRAM_H
#define TESSEL_PROGRAM_PROGRAM_H

#include "tessel/runtime/CpuFeatures.h"
#include "tessel/support/DType.h"
#include "tessel/support/HostTensor.h"
#include "tessel/support/Mesh.h"
#include "tessel/support/Random.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel::program {

/// The description format this library reads and writes.
constexpr int64_t kProgramVersion = 3;

/// Module attributes between `tessel-export-entry` and `tessel-emit-entry`
/// (lib/Lowering/EntryPoint.cpp): the description (a JSON string) and the
/// exported functions with their C symbols and buffer shapes (an array of
/// {function, symbol, buffers} dictionaries).
constexpr llvm::StringLiteral kProgramAttrName = "tessel.program";
constexpr llvm::StringLiteral kEntryAttrName = "tessel.entries";
/// The model's matmul FLOPs per call of the training step (an f64 on the
/// module), which --tessel-train-step sets and the description carries as
/// `model_flops_per_step`.
constexpr llvm::StringLiteral kModelFlopsAttrName = "tessel.model_flops";
/// The module's communicator groups (an array of {mesh, axes}
/// dictionaries) and, on each communicating op, its index in that list
/// (tessel/lowering/CommGroups.h).
constexpr llvm::StringLiteral kGroupsAttrName = "tessel.groups";
constexpr llvm::StringLiteral kGroupAttrName = "tessel.group";

/// What the runtime does with an argument or a result. The compiler sets it
/// (the `tessel.runtime_role` attribute); nothing is inferred from names at
/// run time.
enum class Role : uint8_t {
  // Arguments only.
  Input,        ///< set once, from its init or --init-from
  Tokens,       ///< token ids of a batch (--data)
  Labels,       ///< next-token labels of a batch (--data)
  Step,         ///< the optimizer step counter
  LearningRate, ///< peak learning rate (--lr)
  Apply,        ///< 1 on the last micro-step of an optimizer step, else 0
  GradScale,    ///< 1 / micro-steps per optimizer step
  Seed,         ///< a random seed, new for every call (dropout)
  // Arguments and results: a result feeds the next call's argument of the
  // same role and name.
  Parameter,
  OptimizerState,
  Accumulator, ///< a running gradient sum; starts at zero on resume
  State,       ///< any other value carried from step to step
  // Results only.
  Output,
  Loss,
  GradNorm,
  Metric, ///< a replicated value reported with the loss (an auxiliary loss)
};

llvm::StringRef roleName(Role role);
std::optional<Role> parseRole(llvm::StringRef name);
/// Whether a result of this role feeds the argument of the same role and
/// name (and is written to checkpoints).
bool isCarried(Role role);
bool isArgumentRole(Role role);
bool isResultRole(Role role);
/// The roles arguments (or results) may have, quoted, for messages.
std::string listRoles(bool arguments);

struct TensorInfo {
  std::string name;
  Role role = Role::Input;
  DType dtype = DType::F32;
  Shape shape, globalShape;
  std::vector<std::vector<std::string>> dims; ///< mesh axes per dimension
  std::string init;                           ///< arguments only

  int64_t bytes() const { return numElements(shape) * byteSize(dtype); }
};

struct MeshInfo {
  std::string name;
  MeshShape shape;
  /// The rank running each mesh position (row-major); empty: the identity.
  std::vector<int64_t> devices;

  /// `devices`, or the identity.
  std::vector<int64_t> ranks() const;
  /// The position `rank` runs, or -1.
  int64_t positionOf(int64_t rank) const;
};

/// A communicator group: the devices of a mesh that differ only in their
/// coordinates along `axes` (so a mesh has one such group per combination
/// of its other axes). Compiled collectives name theirs by its index in
/// `Program::groups` (runtime/Abi.h); the runtime makes every group once, at
/// start-up.
struct CommGroup {
  std::string mesh;
  std::vector<std::string> axes;
};

/// One function the program exports.
struct Entry {
  std::string name;   ///< the source function
  std::string symbol; ///< the exported C symbol (runtime/Abi.h)
  std::string mesh;   ///< a MeshInfo's name
  /// "step": every rank runs exactly one step entry, each step; "eval": run
  /// beside the step entry of its mesh (--eval-every), reading that step's
  /// carried arguments of the same names; "init": run once before the first
  /// step (not on --resume), its results setting the step's carried
  /// arguments of the same names (JSON: "kind", absent for steps).
  std::string kind = "step";
  std::vector<TensorInfo> arguments, results;
  std::vector<int64_t> groups; ///< indices of the groups it communicates in
  /// Names of the regions its code marks (runtime/Abi.h tessel_rt_region):
  /// a pipeline stage's actions, then "optimizer" (JSON: absent if none).
  std::vector<std::string> regions;
};

struct Program {
  int64_t version = kProgramVersion;
  std::vector<MeshInfo> meshes;
  std::vector<CommGroup> groups;
  std::vector<Entry> entries;
  rt::CpuTarget target; ///< empty for programs described before compilation
  /// Matmul FLOPs of the whole model per call of its step (all ranks, one
  /// batch, recomputation not counted: 3 x the forward's, PaLM's
  /// convention), for the runtime's model FLOPs utilization; 0: unknown.
  double modelFlopsPerStep = 0;

  const MeshInfo *findMesh(llvm::StringRef name) const;
  /// The ranks a run needs: one more than the highest any entry runs on.
  int64_t worldSize() const;
};

/// Parses and validates (`validateProgram`).
llvm::Expected<Program> parseProgram(llvm::StringRef json);
std::string printProgram(const Program &program);
/// Everything a reader relies on: the version, meshes (positive sizes,
/// devices a permutation), groups over existing axes, each entry's mesh
/// and groups, every rank running exactly one entry, tensor shapes against their
/// global shapes and layouts, roles in their places, inits that parse, and
/// carried results matching their arguments.
llvm::Error validateProgram(const Program &program);

/// Every group of `mesh` over `group.axes`, each as the ranks running its
/// members (through the mesh's device list) in group-index order: the
/// partition `rt::splitByPartition` takes. `group` must be valid for `mesh`.
std::vector<std::vector<int64_t>> groupRanks(const MeshInfo &mesh,
                                             const CommGroup &group);

/// Where each role sits in an entry: the runtime's and the interpreter's
/// view of a training step.
struct Bindings {
  /// Per result: the argument it feeds on the next call.
  std::vector<std::optional<unsigned>> feeds;
  std::optional<unsigned> step, learningRate, apply, gradScale, seed, tokens,
      labels;
  std::optional<unsigned> loss, gradNorm; ///< results
  std::vector<unsigned> metrics;          ///< results, in order
};
/// Valid for entries of a validated program.
Bindings bindRoles(const Entry &entry);

/// Copies `device`'s block of the global tensor into `local` (raw bytes of
/// `info`'s local shape), zero in padding.
void sliceBlock(const HostTensor &global, const TensorInfo &info,
                const MeshShape &mesh, int64_t device, uint8_t *local);
/// The same from the raw bytes of the global tensor (same dtype as `info`),
/// e.g. a mapped safetensors file: only the block's bytes are read.
void sliceBlockBytes(const uint8_t *global, const TensorInfo &info,
                     const MeshShape &mesh, int64_t device, uint8_t *local);
/// Initializes `device`'s block from `spec` without building the global
/// tensor: each element takes the value its global index has in
/// `fillTensor` (so blocks equal slices of the global initialization).
void fillBlock(const TensorInfo &info, const InitSpec &spec, uint64_t seed,
               uint64_t stream, const MeshShape &mesh, int64_t device,
               uint8_t *local);
/// Writes `device`'s block `local` into `global` (skipping padding).
void placeBlock(const uint8_t *local, const TensorInfo &info,
                const MeshShape &mesh, int64_t device, HostTensor &global);
/// The same into the raw bytes of the global tensor (same dtype as `info`).
void placeBlockBytes(const uint8_t *local, const TensorInfo &info,
                     const MeshShape &mesh, int64_t device, uint8_t *global);
/// `device`'s block coordinates: per dimension, its index over the
/// dimension's axes (devices with equal coordinates hold the same block).
std::vector<int64_t> blockCoordinates(const TensorInfo &info,
                                      const MeshShape &mesh, int64_t device);

} // namespace tessel::program

#endif // TESSEL_PROGRAM_PROGRAM_H
