//===- CommReport.cpp - --tessel-comm-report ------------------------------===//

#include "tessel/dialects/tessel/TesselOps.h"
#include "tessel/passes/Passes.h"
#include "tessel/sharding/Traffic.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <map>

#define DEBUG_TYPE "tessel-comm-report"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCOMMREPORTPASS
#include "tessel/passes/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct Entry {
  std::string op, kind, axes, loc;
  std::vector<std::string> axisNames;
  int64_t group = 1, elements = 0, bytes = 0;
  double sent = 0;
};

struct TesselCommReportPass
    : mlir::tessel::impl::TesselCommReportPassBase<TesselCommReportPass> {
  using TesselCommReportPassBase::TesselCommReportPassBase;

  void runOnOperation() override {
    if (format != "text" && format != "json") {
      getOperation().emitError() << "format must be text or json";
      return signalPassFailure();
    }
    llvm::json::Array functions;
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      auto meshRef = func->getAttrOfType<FlatSymbolRefAttr>(
          TesselDialect::kSpmdAttrName);
      MeshOp mesh = meshRef ? lookupMesh(func, meshRef) : MeshOp();
      if (!mesh)
        continue;
      std::vector<Entry> entries;
      func.walk([&](CollectiveOpInterface op) {
        CollectiveTraffic traffic = op.getTraffic();
        if (traffic == CollectiveTraffic::None)
          return;
        Entry e;
        e.op = op->getName().stripDialect().str();
        if (auto k = op->getAttrOfType<IntegerAttr>("kind"))
          e.kind = stringifyCollectiveKind(
                       static_cast<CollectiveKind>(k.getInt()))
                       .str();
        e.axes = "[";
        for (auto [i, a] : llvm::enumerate(op.getAxes())) {
          StringRef name = cast<StringAttr>(a).getValue();
          e.axisNames.push_back(name.str());
          e.axes += (i ? ", \"" : "\"") + name.str() + "\"";
          e.group *= mesh.getAxisSize(name);
        }
        e.axes += "]";
        e.loc = locationString(op->getLoc());
        e.elements =
            cast<RankedTensorType>(op->getOperand(0).getType()).getNumElements();
        e.bytes = op.getTrafficBytes();
        e.sent = collectiveSentBytes(traffic, e.group,
                                                         e.bytes);
        entries.push_back(e);
      });
      double total = 0;
      std::map<std::string, std::pair<int64_t, double>> byKind;
      for (const Entry &e : entries) {
        total += e.sent;
        byKind[e.op].first++;
        byKind[e.op].second += e.sent;
      }
      if (format == "json") {
        llvm::json::Array list;
        for (const Entry &e : entries)
          list.push_back(llvm::json::Object{
              {"op", e.op}, {"kind", e.kind},
              {"axes", llvm::json::Array(e.axisNames)},
              {"group", e.group}, {"elements", e.elements},
              {"bytes", e.bytes}, {"sent_bytes", std::llround(e.sent)},
              {"loc", e.loc}});
        functions.push_back(llvm::json::Object{
            {"function", func.getSymName()},
            {"mesh", mesh.getSymName()},
            {"collectives", std::move(list)},
            {"total_sent_bytes", std::llround(total)}});
        continue;
      }
      llvm::raw_ostream &os = llvm::outs();
      os << "// Communication of @" << func.getSymName() << " on @"
         << mesh.getSymName() << ", per device per call\n";
      os << llvm::format("%-22s %-14s %5s %12s %12s %14s  %s\n", "collective",
                         "axes", "group", "elements", "bytes", "sent bytes",
                         "location");
      for (const Entry &e : entries)
        os << llvm::format("%-22s %-14s %5lld %12lld %12lld %14.0f  %s\n",
                           (e.op + (e.kind.empty() ? "" : " " + e.kind))
                               .c_str(),
                           e.axes.c_str(), (long long)e.group,
                           (long long)e.elements, (long long)e.bytes, e.sent,
                           e.loc.c_str());
      for (const auto &[kind, stats] : byKind)
        os << llvm::format("total %-16s %lld collectives, %.0f bytes sent\n",
                           kind.c_str(), (long long)stats.first,
                           stats.second);
      os << llvm::format("total: %zu collectives, %.0f bytes sent per device\n",
                         entries.size(), total);
    }
    if (format == "json")
      llvm::outs() << llvm::formatv(
                          "{0:2}", llvm::json::Value(llvm::json::Object{
                                       {"functions", std::move(functions)}}))
                   << "\n";
  }
};
} // namespace
