//===- ProgramTest.cpp - program descriptions: format, validation, layout -===//

#include "tessel/program/Program.h"

#include <gtest/gtest.h>

#include <numeric>

using namespace tessel;
using namespace tessel::program;

namespace {

/// A valid one-entry training program on dp=2 x tp=3.
Program sample() {
  Program p;
  MeshInfo mesh;
  mesh.name = "mesh";
  mesh.shape.axisNames = {"dp", "tp"};
  mesh.shape.axisSizes = {2, 3};
  p.meshes.push_back(mesh);
  p.groups.push_back({"mesh", {"tp"}});
  p.groups.push_back({"mesh", {"dp", "tp"}});
  Entry e;
  e.name = "train_step";
  e.symbol = "tessel_entry";
  e.mesh = "mesh";
  e.groups = {0, 1};
  TensorInfo w;
  w.name = "w";
  w.role = Role::Parameter;
  w.dtype = DType::F32;
  w.globalShape = {4, 7}; // 7 over tp=3: blocks of 3, the last padded
  w.shape = {4, 3};
  w.dims = {{}, {"tp"}};
  w.init = "normal:0.02";
  TensorInfo step;
  step.name = "step";
  step.role = Role::Step;
  step.dtype = DType::I32;
  step.init = "zeros";
  e.arguments = {w, step};
  TensorInfo loss;
  loss.name = "loss";
  loss.role = Role::Loss;
  e.results = {w, loss};
  e.results[0].init.clear();
  p.entries.push_back(e);
  return p;
}

/// The message of parsing `p` after `damage`, or "" if it parses.
template <typename Fn>
std::string errorAfter(Fn damage) {
  Program p = sample();
  damage(p);
  llvm::Expected<Program> back = parseProgram(printProgram(p));
  return back ? "" : llvm::toString(back.takeError());
}

TEST(Program, DescriptionRoundTrips) {
  Program p = sample();
  p.meshes[0].devices = {5, 4, 3, 2, 1, 0};
  llvm::Expected<Program> back = parseProgram(printProgram(p));
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  const Entry &e = back->entries[0];
  EXPECT_EQ(e.arguments[0].dims, p.entries[0].arguments[0].dims);
  EXPECT_EQ(e.arguments[0].init, "normal:0.02");
  EXPECT_EQ(e.arguments[1].role, Role::Step);
  EXPECT_EQ(e.results[1].role, Role::Loss);
  EXPECT_EQ(back->meshes[0].shape.axisSizes, p.meshes[0].shape.axisSizes);
  EXPECT_EQ(back->meshes[0].devices, p.meshes[0].devices);
  ASSERT_EQ(back->groups.size(), 2u);
  EXPECT_EQ(back->groups[1].axes, (std::vector<std::string>{"dp", "tp"}));
  EXPECT_EQ(e.groups, (std::vector<int64_t>{0, 1}));
  Bindings b = bindRoles(e);
  EXPECT_EQ(b.feeds[0], std::optional<unsigned>(0));
  EXPECT_EQ(b.step, std::optional<unsigned>(1));
  EXPECT_EQ(b.loss, std::optional<unsigned>(1));
}

TEST(Program, RolesNotNamesBindArguments) {
  // A parameter named `step` and one named `loss` are parameters.
  Program p = sample();
  Entry &e = p.entries[0];
  e.arguments[0].name = e.results[0].name = "step";
  TensorInfo other = e.arguments[0];
  other.name = "loss";
  e.arguments.push_back(other);
  e.results.push_back(other);
  e.results.back().init.clear();
  llvm::Expected<Program> back = parseProgram(printProgram(p));
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  Bindings b = bindRoles(back->entries[0]);
  EXPECT_EQ(b.step, std::optional<unsigned>(1));
  EXPECT_EQ(b.feeds[0], std::optional<unsigned>(0));
  EXPECT_EQ(b.feeds[2], std::optional<unsigned>(2));
  EXPECT_EQ(b.loss, std::optional<unsigned>(1));
}

TEST(Program, RefusesMalformedDescriptions) {
  auto parse = [](llvm::StringRef json) {
    llvm::Expected<Program> p = parseProgram(json);
    return p ? std::string() : llvm::toString(p.takeError());
  };
  EXPECT_NE(parse("{\"version\": 2,").find("program description:"),
            std::string::npos);
  EXPECT_NE(parse("[]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(parse("{\"function\": \"f\", \"arguments\": []}")
                .find("no version"),
            std::string::npos);
  std::string json = printProgram(sample());
  std::string v1 = json;
  v1.replace(v1.find("\"version\":3"), 11, "\"version\":1");
  EXPECT_NE(parse(v1).find("version 1, but this Tessel reads version 3"),
            std::string::npos);
  std::string badRole = json;
  badRole.replace(badRole.find("\"parameter\""), 11, "\"weights\"");
  EXPECT_NE(parse(badRole).find("unknown role 'weights'"), std::string::npos);
}

TEST(Program, ValidationNamesWhatIsWrong) {
  EXPECT_EQ(errorAfter([](Program &) {}), "");
  EXPECT_NE(errorAfter([](Program &p) { p.entries[0].mesh = "other"; })
                .find("runs on mesh 'other', which the description lacks"),
            std::string::npos);
  EXPECT_NE(errorAfter([](Program &p) {
              p.meshes[0].devices = {0, 1, 2, 3, 4, 4};
            }).find("devices must be distinct, non-negative ranks (rank 4)"),
            std::string::npos);
  EXPECT_NE(errorAfter([](Program &p) {
              p.entries[0].arguments[0].dims[1] = {"pp"};
            }).find("argument 'w' is split over 'pp', which its mesh lacks"),
            std::string::npos);
  EXPECT_NE(errorAfter([](Program &p) {
              p.entries[0].arguments[0].shape[1] = 4;
            }).find("block of 4 in dimension 1, not ceil(7 / 3)"),
            std::string::npos);
  EXPECT_NE(errorAfter([](Program &p) {
              p.entries[0].results[0].name = "v";
            }).find("result 'v' (parameter) feeds no argument"),
            std::string::npos);
  EXPECT_NE(errorAfter([](Program &p) {
              p.entries[0].results[0].dims = {{"dp"}, {"tp"}};
              p.entries[0].results[0].shape = {2, 3};
            }).find("laid out differently"),
            std::string::npos);
  EXPECT_NE(errorAfter([](Program &p) {
              p.entries[0].arguments[1].role = Role::Loss;
            }).find("argument 'step' has the role 'loss', which only results"),
            std::string::npos);
  EXPECT_NE(errorAfter([](Program &p) {
              p.entries[0].arguments.push_back(p.entries[0].arguments[1]);
            }).find("more than one step argument"),
            std::string::npos);
  EXPECT_NE(errorAfter([](Program &p) {
              p.entries[0].arguments[0].init = "gaussian";
            }).find("argument 'w'"),
            std::string::npos);
}

/// `sample()` plus an evaluation entry reading its parameter `w`.
Program withEval() {
  Program p = sample();
  Entry eval = p.entries[0];
  eval.name = "forward";
  eval.symbol = "tessel_entry_1";
  eval.kind = "eval";
  eval.arguments[0].role = Role::Input;
  eval.arguments.pop_back(); // no step counter
  eval.results = {p.entries[0].results[1]}; // the loss, named as the step's
  p.entries.push_back(eval);
  return p;
}

TEST(Program, EvaluationsShareTheirStepsRanks) {
  Program p = withEval();
  llvm::Expected<Program> back = parseProgram(printProgram(p));
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->entries[1].kind, "eval");
  EXPECT_EQ(back->entries[0].kind, "step");
  EXPECT_EQ(back->worldSize(), 6);
  auto errorOf = [](Program q) {
    llvm::Expected<Program> r = parseProgram(printProgram(q));
    return r ? std::string() : llvm::toString(r.takeError());
  };
  Program wrongLayout = withEval();
  wrongLayout.entries[1].arguments[0].dims = {{"dp"}, {}};
  wrongLayout.entries[1].arguments[0].shape = {2, 7};
  EXPECT_NE(errorOf(wrongLayout).find("reads 'w' of entry 'train_step', but "
                                      "its type or layout differs there"),
            std::string::npos);
  Program carries = withEval();
  carries.entries[1].arguments[0].role = Role::Parameter;
  EXPECT_NE(errorOf(carries).find("only steps carry values"),
            std::string::npos);
  Program alone = withEval();
  alone.entries[0].kind = "eval";
  EXPECT_NE(errorOf(alone).find("where no step entry runs"),
            std::string::npos);
  std::string badKind = printProgram(withEval());
  size_t at = badKind.find("\"kind\":\"eval\"");
  ASSERT_NE(at, std::string::npos);
  badKind.replace(at, 13, "\"kind\":\"warm\"");
  llvm::Expected<Program> bad = parseProgram(badKind);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("kind must be step, eval or init"),
            std::string::npos);
}

TEST(Program, InitEntriesSetTheirStepsParameters) {
  Program p = withEval();
  p.entries[1].kind = "init";
  p.entries[1].arguments.clear();
  p.entries[1].results = {p.entries[0].arguments[0]}; // w
  p.entries[1].results[0].role = Role::Output;
  llvm::Expected<Program> back = parseProgram(printProgram(p));
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->entries[1].kind, "init");
  Program stray = p;
  stray.entries[1].results[0].name = "v";
  llvm::Expected<Program> bad = parseProgram(printProgram(stray));
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError())
                .find("init entry 'forward' returns 'v', which no parameter "
                      "or state of entry 'train_step' is named"),
            std::string::npos);
}

TEST(Program, GroupsAreCheckedAndMapPositionsToRanks) {
  EXPECT_NE(errorAfter([](Program &p) { p.groups[0].axes = {"pp"}; })
                .find("group 0 is over axis 'pp', which mesh 'mesh' lacks"),
            std::string::npos);
  EXPECT_NE(errorAfter([](Program &p) { p.groups[1].mesh = "m2"; })
                .find("group 1 is on mesh 'm2', which the description lacks"),
            std::string::npos);
  EXPECT_NE(errorAfter([](Program &p) { p.groups[0].axes.clear(); })
                .find("group 0 has no axes"),
            std::string::npos);
  EXPECT_NE(errorAfter([](Program &p) { p.entries[0].groups = {2}; })
                .find("entry 'train_step' uses group 2 of 2"),
            std::string::npos);
  // dp=2 x tp=3: groups over tp are the rows, over dp the columns; the
  // device list says which rank runs each position.
  Program p = sample();
  MeshInfo &mesh = p.meshes[0];
  using Partition = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(groupRanks(mesh, {"mesh", {"tp"}}), (Partition{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(groupRanks(mesh, {"mesh", {"dp"}}),
            (Partition{{0, 3}, {1, 4}, {2, 5}}));
  EXPECT_EQ(groupRanks(mesh, {"mesh", {"tp", "dp"}}),
            (Partition{{0, 3, 1, 4, 2, 5}}));
  mesh.devices = {5, 4, 3, 2, 1, 0};
  EXPECT_EQ(groupRanks(mesh, {"mesh", {"tp"}}), (Partition{{5, 4, 3}, {2, 1, 0}}));
}

TEST(Program, BlocksTileTheGlobalTensor) {
  Program p = sample();
  const TensorInfo &w = p.entries[0].arguments[0];
  const MeshShape &mesh = p.meshes[0].shape;
  HostTensor global(DType::F32, {4, 7}), rebuilt(DType::F32, {4, 7});
  std::iota(global.f.begin(), global.f.end(), 1.0);
  for (int64_t dev = 0; dev < 6; ++dev) {
    std::vector<float> block(12);
    sliceBlock(global, w, mesh, dev, reinterpret_cast<uint8_t *>(block.data()));
    if (dev % 3 == 2) { // tp index 2 holds column 6 and two padding columns
      EXPECT_EQ(block[1], 0.0f);
    }
    placeBlock(reinterpret_cast<uint8_t *>(block.data()), w, mesh, dev,
               rebuilt);
  }
  EXPECT_EQ(rebuilt.f, global.f);
}

TEST(Program, BlockInitializationEqualsTheGlobalOne) {
  // Each rank computes its block alone; it must equal the slice of the
  // global initialization, for every kind of init and dtype.
  Program p = sample();
  const MeshShape &mesh = p.meshes[0].shape;
  for (const char *init : {"normal:0.02", "uniform:-1:3", "int:0:50",
                           "bernoulli:0.3", "constant:2.5"})
    for (DType dtype : {DType::F32, DType::BF16, DType::I32, DType::F64}) {
      TensorInfo w = p.entries[0].arguments[0];
      w.dtype = dtype;
      llvm::Expected<InitSpec> spec = parseInitSpec(init);
      ASSERT_TRUE(bool(spec));
      HostTensor global(dtype, w.globalShape);
      fillTensor(global, *spec, 7, streamOf("w"));
      for (int64_t dev = 0; dev < 6; ++dev) {
        std::vector<uint8_t> sliced(w.bytes()), filled(w.bytes());
        sliceBlock(global, w, mesh, dev, sliced.data());
        fillBlock(w, *spec, 7, streamOf("w"), mesh, dev, filled.data());
        EXPECT_EQ(sliced, filled) << init << " " << name(dtype).str() << " " << dev;
      }
    }
}

} // namespace
