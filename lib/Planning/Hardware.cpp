//===- Hardware.cpp - hardware descriptions from data files ---------------===//

#include "tessel/planning/CostModel.h"

#include "tessel/support/Json.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir::tessel::planning;

double Hardware::peak(llvm::StringRef computeType) const {
  auto it = peakFlops.find(computeType.str());
  if (it != peakFlops.end())
    return it->second;
  double best = 0;
  for (auto &[type, flops] : peakFlops)
    best = std::max(best, flops);
  return best;
}

namespace {

/// Reads the fields of a JSON object, collecting the first problem as an
/// error naming the file and the field.
struct Reader {
  llvm::StringRef source;
  std::string error;

  double number(const llvm::json::Object &o, llvm::StringRef key,
                llvm::StringRef where, double fallback = -1) {
    if (auto v = o.getNumber(key))
      return *v;
    if (fallback < 0 && error.empty())
      error = (source + ": " + where + key + ": a number is required").str();
    return fallback;
  }
  const llvm::json::Object *object(const llvm::json::Object &o,
                                   llvm::StringRef key) {
    const llvm::json::Object *inner = o.getObject(key);
    if (!inner && error.empty())
      error = (source + ": " + key + ": an object is required").str();
    return inner;
  }
  Link link(const llvm::json::Object &links, llvm::StringRef key) {
    Link l;
    const llvm::json::Object *o = object(links, key);
    if (!o)
      return l;
    if (auto name = o->getString("name"))
      l.name = name->str();
    std::string where = ("links." + key + ".").str();
    l.bandwidth = number(*o, "bandwidth_gbytes_per_s", where) * 1e9;
    l.latency = number(*o, "latency_us", where) * 1e-6;
    return l;
  }
};

} // namespace

llvm::Expected<Hardware>
mlir::tessel::planning::parseHardware(const llvm::json::Value &value,
                                      llvm::StringRef source) {
  const llvm::json::Object *o = value.getAsObject();
  if (!o)
    return llvm::createStringError(source + ": a JSON object is required");
  Reader r{source, ""};
  Hardware hw;
  if (auto name = o->getString("name"))
    hw.name = name->str();
  hw.memoryBytes = r.number(*o, "memory_gib", "") * double(1ull << 30);
  hw.usableFraction = r.number(*o, "usable_memory_fraction", "", 0.9);
  hw.efficiency = r.number(*o, "matmul_efficiency", "");
  hw.overlap = r.number(*o, "overlap", "", 0.9);
  hw.devicesPerNode = int64_t(r.number(*o, "devices_per_node", ""));
  hw.computeUnitsPerNode =
      int64_t(r.number(*o, "compute_units_per_node", "", 0));
  hw.memoryBandwidth =
      r.number(*o, "memory_bandwidth_gbytes_per_s", "", 0) * 1e9;
  if (const llvm::json::Object *peaks = r.object(*o, "peak_tflops"))
    for (auto &[type, v] : *peaks)
      if (auto tflops = v.getAsNumber())
        hw.peakFlops[type.str()] = *tflops * 1e12;
  if (const llvm::json::Object *links = r.object(*o, "links")) {
    hw.intraNode = r.link(*links, "intra_node");
    hw.interNode = r.link(*links, "inter_node");
  }
  if (r.error.empty() && hw.peakFlops.empty())
    r.error = (source + ": peak_tflops names no compute type").str();
  if (r.error.empty() &&
      (hw.memoryBytes <= 0 || hw.efficiency <= 0 || hw.efficiency > 1 ||
       hw.devicesPerNode < 1 || hw.computeUnitsPerNode < 0 ||
       hw.memoryBandwidth < 0 ||
       hw.intraNode.bandwidth <= 0 ||
       hw.interNode.bandwidth <= 0))
    r.error = (source + ": memory, matmul_efficiency (0-1], devices_per_node "
                        "and the links' bandwidths must be positive, "
                        "compute_units_per_node and "
                        "memory_bandwidth_gbytes_per_s not negative")
                  .str();
  if (!r.error.empty())
    return llvm::createStringError(r.error);
  return hw;
}

llvm::Expected<Hardware>
mlir::tessel::planning::loadHardware(llvm::StringRef nameOrPath,
                                     llvm::ArrayRef<std::string> dirs) {
  std::string path = nameOrPath.str();
  if (!llvm::sys::fs::exists(path)) {
    std::vector<std::string> names;
    for (const std::string &dir : dirs) {
      llvm::SmallString<256> candidate(dir);
      llvm::sys::path::append(candidate, nameOrPath + ".json");
      if (llvm::sys::fs::exists(candidate)) {
        path = candidate.str().str();
        break;
      }
      std::error_code ec;
      for (llvm::sys::fs::directory_iterator it(dir, ec), end;
           it != end && !ec; it.increment(ec))
        if (llvm::sys::path::extension(it->path()) == ".json")
          names.push_back(llvm::sys::path::stem(it->path()).str());
    }
    if (!llvm::sys::fs::exists(path)) {
      llvm::sort(names);
      names.erase(std::unique(names.begin(), names.end()), names.end());
      std::string known;
      for (const std::string &n : names)
        known += (known.empty() ? "" : ", ") + n;
      return llvm::createStringError(
          "no hardware description '" + nameOrPath.str() + "'; known: " +
          (known.empty() ? std::string("none") : known) +
          " (or give a path to a JSON file, docs/planning.md)");
    }
  }
  llvm::Expected<llvm::json::Value> json = ::tessel::readJsonFile(path);
  if (!json)
    return json.takeError();
  return parseHardware(*json, path);
}
