//===- Validate.cpp - what a reader of a description relies on ------------===//

#include "tessel/program/Program.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace tessel;
using namespace tessel::program;

namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "program description: " + message);
}

llvm::Error validateMesh(const MeshInfo &m) {
  if (m.shape.axisNames.size() != m.shape.axisSizes.size())
    return fail("mesh '" + m.name + "' has " +
                llvm::Twine(m.shape.axisNames.size()) + " axes but " +
                llvm::Twine(m.shape.axisSizes.size()) + " sizes");
  llvm::StringSet<> seen;
  for (auto [axis, size] : llvm::zip(m.shape.axisNames, m.shape.axisSizes)) {
    if (size < 1)
      return fail("mesh '" + m.name + "': axis '" + axis + "' has size " +
                  llvm::Twine(size));
    if (!isValidAxisName(axis))
      return fail("mesh '" + m.name + "' has an axis named '" + axis +
                  "' (empty, or with ':', '(' or ')')");
    if (!seen.insert(axis).second)
      return fail("mesh '" + m.name + "' repeats axis '" + axis + "'");
  }
  if (m.devices.empty())
    return llvm::Error::success();
  int64_t n = m.shape.numDevices();
  if (int64_t(m.devices.size()) != n)
    return fail("mesh '" + m.name + "' lists " +
                llvm::Twine(m.devices.size()) + " devices for " +
                llvm::Twine(n) + " positions");
  llvm::DenseSet<int64_t> used;
  for (int64_t d : m.devices)
    if (d < 0 || !used.insert(d).second)
      return fail("mesh '" + m.name + "': devices must be distinct, "
                  "non-negative ranks (rank " + llvm::Twine(d) + ")");
  return llvm::Error::success();
}

llvm::Error validateTensor(const TensorInfo &t, const MeshShape &mesh,
                           bool argument) {
  auto bad = [&](const llvm::Twine &why) {
    return fail((argument ? "argument '" : "result '") + t.name + "' " + why);
  };
  if (argument ? !isArgumentRole(t.role) : !isResultRole(t.role))
    return bad("has the role '" + roleName(t.role) + "', which only " +
               (argument ? "results" : "arguments") + " have");
  if (t.shape.size() != t.globalShape.size() || t.dims.size() != t.shape.size())
    return bad("has inconsistent ranks");
  std::vector<std::string> used;
  for (auto [d, axes] : llvm::enumerate(t.dims)) {
    int64_t devices = 1;
    for (const std::string &axis : axes) {
      if (mesh.axisSize(axis) < 0)
        return bad("is split over '" + axis + "', which its mesh lacks");
      if (llvm::any_of(
              used, [&](const std::string &u) { return axesConflict(u, axis); }))
        return bad("uses mesh axis '" + axis + "' twice");
      used.push_back(axis);
      devices *= mesh.axisSize(axis);
    }
    int64_t global = t.globalShape[d];
    if (global < 0 || t.shape[d] != (global + devices - 1) / devices)
      return bad("has a block of " + llvm::Twine(t.shape[d]) +
                 " in dimension " + llvm::Twine(d) + ", not ceil(" +
                 llvm::Twine(global) + " / " + llvm::Twine(devices) + ")");
  }
  if (argument) {
    llvm::Expected<InitSpec> spec = parseInitSpec(t.init);
    if (!spec)
      return bad(llvm::toString(spec.takeError()));
  }
  return llvm::Error::success();
}

llvm::Error validateGroup(const CommGroup &g, size_t index,
                          const Program &p) {
  const MeshInfo *mesh = p.findMesh(g.mesh);
  if (!mesh)
    return fail("group " + llvm::Twine(index) + " is on mesh '" + g.mesh +
                "', which the description lacks");
  if (g.axes.empty())
    return fail("group " + llvm::Twine(index) + " has no axes");
  std::vector<std::string> seen;
  for (const std::string &axis : g.axes) {
    if (mesh->shape.axisSize(axis) < 0)
      return fail("group " + llvm::Twine(index) + " is over axis '" + axis +
                  "', which mesh '" + g.mesh + "' lacks");
    if (llvm::any_of(
            seen, [&](const std::string &u) { return axesConflict(u, axis); }))
      return fail("group " + llvm::Twine(index) + " repeats axis '" + axis +
                  "'");
    seen.push_back(axis);
  }
  return llvm::Error::success();
}

/// Carried results match their arguments; roles that drive the runtime
/// appear at most once.
llvm::Error validateRoles(const Entry &e) {
  std::map<std::pair<Role, std::string>, const TensorInfo *> carried;
  std::map<Role, int> count;
  for (const TensorInfo &a : e.arguments) {
    if (isCarried(a.role) && !carried.emplace(std::pair{a.role, a.name}, &a).second)
      return fail("entry '" + e.name + "' has two " + roleName(a.role) +
                  " arguments named '" + a.name + "'");
    if (a.role == Role::Seed &&
        (a.globalShape.size() > 1 ||
         (a.dtype != DType::I32 && a.dtype != DType::I64)))
      return fail("seed argument '" + a.name + "' of entry '" + e.name +
                  "' must be a 0-d integer tensor (tensor<i64>), or 1-d: "
                  "one seed per microbatch of a pipeline");
    if (a.role != Role::Input && !isCarried(a.role) && ++count[a.role] > 1)
      return fail("entry '" + e.name + "' has more than one " +
                  roleName(a.role) + " argument; give each argument one " +
                  "role (tessel.runtime_role)");
  }
  llvm::StringSet<> fed;
  for (const TensorInfo &r : e.results) {
    if (r.role == Role::Metric &&
        llvm::any_of(r.dims, [](const auto &axes) { return !axes.empty(); }))
      return fail("metric result '" + r.name + "' of entry '" + e.name +
                  "' is split over the mesh; metrics must be replicated");
    if (r.role != Role::Output && r.role != Role::Metric &&
        !isCarried(r.role) && ++count[r.role] > 1)
      return fail("entry '" + e.name + "' has more than one " +
                  roleName(r.role) + " result; give each result one role " +
                  "(tessel.runtime_role)");
    if (!isCarried(r.role))
      continue;
    auto it = carried.find({r.role, r.name});
    if (it == carried.end())
      return fail("result '" + r.name + "' (" + roleName(r.role) +
                  ") feeds no argument of that role and name; name it as " +
                  "the argument it updates");
    if (!fed.insert((roleName(r.role) + "/" + r.name).str()).second)
      return fail("two results feed the " + roleName(r.role) + " argument '" +
                  r.name + "'");
    const TensorInfo &a = *it->second;
    if (a.dtype != r.dtype || a.shape != r.shape ||
        a.globalShape != r.globalShape || a.dims != r.dims)
      return fail("result '" + r.name + "' is laid out differently from " +
                  "the argument it feeds (the runtime passes it back as it " +
                  "is); give both the same type and tessel.sharding");
  }
  return llvm::Error::success();
}

/// Every rank from 0 up runs exactly one entry (the ranks of its mesh), and
/// entries run together do not share a result name (results are gathered
/// and checkpointed by name).
/// The step's carried argument named `name`, or null.
const TensorInfo *carriedArgument(const Entry &step, llvm::StringRef name) {
  for (const TensorInfo &s : step.arguments)
    if (s.name == name && isCarried(s.role))
      return &s;
  return nullptr;
}

bool sameLayout(const TensorInfo &a, const TensorInfo &b) {
  return a.dtype == b.dtype && a.globalShape == b.globalShape &&
         a.dims == b.dims;
}

/// An evaluation entry runs on the mesh of one step entry and reads that
/// step's carried arguments of the same names, laid out alike; an init
/// entry sets them with its results.
llvm::Error validateBeside(const Program &p, const Entry &entry) {
  bool init = entry.kind == "init";
  std::string what = init ? "init entry '" : "evaluation entry '";
  const Entry *step = nullptr;
  for (const Entry &e : p.entries)
    if (e.kind == "step" && e.mesh == entry.mesh)
      step = &e;
  if (!step)
    return fail(what + entry.name + "' runs on mesh '" + entry.mesh +
                "', where no step entry runs; it shares its step's devices");
  for (const TensorInfo &a : entry.arguments) {
    if (isCarried(a.role))
      return fail(what + entry.name + "': argument '" + a.name + "' is a " +
                  roleName(a.role) + ", but only steps carry values");
    const TensorInfo *s = carriedArgument(*step, a.name);
    if (!init && s && !sameLayout(*s, a))
      return fail(what + entry.name + "' reads '" + a.name + "' of entry '" +
                  step->name + "', but its type or layout differs there");
  }
  for (const TensorInfo &r : init ? entry.results
                                  : std::vector<TensorInfo>()) {
    const TensorInfo *s = carriedArgument(*step, r.name);
    if (!s)
      return fail(what + entry.name + "' returns '" + r.name +
                  "', which no parameter or state of entry '" + step->name +
                  "' is named");
    if (!sameLayout(*s, r))
      return fail(what + entry.name + "' sets '" + r.name + "' of entry '" +
                  step->name + "', but its type or layout differs there");
  }
  return llvm::Error::success();
}

llvm::Error validateRanks(const Program &p) {
  std::vector<const Entry *> runner;
  for (const Entry &e : p.entries) {
    if (e.kind != "step") {
      if (llvm::Error err = validateBeside(p, e))
        return err;
      continue;
    }
    for (int64_t r : p.findMesh(e.mesh)->ranks()) {
      if (r >= int64_t(runner.size()))
        runner.resize(r + 1, nullptr);
      if (runner[r])
        return fail("rank " + llvm::Twine(r) + " runs both entry '" +
                    runner[r]->name + "' and entry '" + e.name +
                    "'; their meshes need disjoint devices");
      runner[r] = &e;
    }
  }
  for (auto [r, e] : llvm::enumerate(runner))
    if (!e)
      return fail("rank " + llvm::Twine(r) + " runs no entry; the entries' "
                  "meshes must cover ranks 0.." +
                  llvm::Twine(runner.size() - 1));
  if (p.entries.size() < 2)
    return llvm::Error::success();
  std::map<std::string, const Entry *> owner;
  for (const Entry &e : p.entries) {
    if (e.kind != "step") // evaluations and inits: results are not saved
      continue;
    for (const TensorInfo &t : e.results) {
      auto [it, fresh] = owner.emplace(t.name, &e);
      if (fresh || it->second == &e)
        continue;
      // A parameter two pipeline stages hold (a tied embedding): the same
      // carried tensor, saved once (from the first entry).
      const TensorInfo *first = nullptr;
      for (const TensorInfo &o : it->second->results)
        if (o.name == t.name)
          first = &o;
      if (first && isCarried(t.role) && first->role == t.role &&
          first->dtype == t.dtype && first->globalShape == t.globalShape)
        continue;
      return fail("entries '" + it->second->name + "' and '" + e.name +
                  "' both return '" + t.name + "'; results of entries " +
                  "run together need distinct names (or, for a tensor "
                  "two stages hold, the same role, type and shape)");
    }
  }
  return llvm::Error::success();
}

} // namespace

std::vector<int64_t> MeshInfo::ranks() const {
  if (!devices.empty())
    return devices;
  std::vector<int64_t> identity(shape.numDevices());
  for (size_t k = 0; k < identity.size(); ++k)
    identity[k] = int64_t(k);
  return identity;
}

int64_t MeshInfo::positionOf(int64_t rank) const {
  if (devices.empty())
    return rank < shape.numDevices() ? rank : -1;
  for (size_t k = 0; k < devices.size(); ++k)
    if (devices[k] == rank)
      return int64_t(k);
  return -1;
}

int64_t Program::worldSize() const {
  int64_t size = 0;
  for (const Entry &e : entries)
    for (int64_t r : findMesh(e.mesh)->ranks())
      size = std::max(size, r + 1);
  return size;
}

llvm::Error program::validateProgram(const Program &p) {
  if (p.version != kProgramVersion)
    return fail("version " + llvm::Twine(p.version) + ", expected " +
                llvm::Twine(kProgramVersion));
  if (!(p.modelFlopsPerStep >= 0) || std::isinf(p.modelFlopsPerStep))
    return fail("model_flops_per_step must be a finite number, not negative");
  llvm::StringSet<> names;
  for (const MeshInfo &m : p.meshes) {
    if (!names.insert(m.name).second)
      return fail("two meshes are named '" + m.name + "'");
    if (llvm::Error err = validateMesh(m))
      return err;
  }
  for (auto [i, g] : llvm::enumerate(p.groups))
    if (llvm::Error err = validateGroup(g, i, p))
      return err;
  if (p.entries.empty())
    return fail("no entry points");
  names.clear();
  for (const Entry &e : p.entries) {
    if (!names.insert(e.symbol).second)
      return fail("two entry points export '" + e.symbol + "'");
    const MeshInfo *mesh = p.findMesh(e.mesh);
    if (!mesh)
      return fail("entry '" + e.name + "' runs on mesh '" + e.mesh +
                  "', which the description lacks");
    for (int64_t g : e.groups)
      if (g < 0 || g >= int64_t(p.groups.size()))
        return fail("entry '" + e.name + "' uses group " + llvm::Twine(g) +
                    " of " + llvm::Twine(p.groups.size()));
    for (const TensorInfo &t : e.arguments)
      if (llvm::Error err = validateTensor(t, mesh->shape, true))
        return err;
    for (const TensorInfo &t : e.results)
      if (llvm::Error err = validateTensor(t, mesh->shape, false))
        return err;
    if (llvm::Error err = validateRoles(e))
      return err;
  }
  return validateRanks(p);
}

std::vector<std::vector<int64_t>>
program::groupRanks(const MeshInfo &mesh, const CommGroup &group) {
  std::vector<std::vector<int64_t>> out;
  int64_t n = mesh.shape.numDevices();
  std::vector<bool> placed(n, false);
  for (int64_t position = 0; position < n; ++position) {
    if (placed[position])
      continue;
    std::vector<int64_t> members = mesh.shape.group(position, group.axes);
    for (int64_t &m : members) {
      placed[m] = true;
      m = mesh.devices.empty() ? m : mesh.devices[m];
    }
    out.push_back(std::move(members));
  }
  return out;
}

Bindings program::bindRoles(const Entry &e) {
  Bindings b;
  std::map<std::pair<Role, std::string>, unsigned> carried;
  for (auto [i, a] : llvm::enumerate(e.arguments)) {
    switch (a.role) {
    case Role::Step:
      b.step = i;
      break;
    case Role::LearningRate:
      b.learningRate = i;
      break;
    case Role::Apply:
      b.apply = i;
      break;
    case Role::GradScale:
      b.gradScale = i;
      break;
    case Role::Seed:
      b.seed = i;
      break;
    case Role::Tokens:
      b.tokens = i;
      break;
    case Role::Labels:
      b.labels = i;
      break;
    default:
      if (isCarried(a.role))
        carried[{a.role, a.name}] = i;
      break;
    }
  }
  for (auto [i, r] : llvm::enumerate(e.results)) {
    b.feeds.emplace_back();
    if (r.role == Role::Loss)
      b.loss = i;
    else if (r.role == Role::GradNorm)
      b.gradNorm = i;
    else if (r.role == Role::Metric)
      b.metrics.push_back(i);
    else if (isCarried(r.role))
      b.feeds.back() = carried.at({r.role, r.name});
  }
  return b;
}
