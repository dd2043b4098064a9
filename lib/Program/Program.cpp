//===- Program.cpp - reading and writing program descriptions -------------===//

#include "tessel/program/Program.h"
#include "tessel/support/Json.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"

using namespace tessel;
using namespace tessel::program;

namespace {

struct RoleInfo {
  Role role;
  llvm::StringLiteral name;
  bool argument, result;
};

constexpr RoleInfo kRoles[] = {
    {Role::Input, "input", true, false},
    {Role::Tokens, "tokens", true, false},
    {Role::Labels, "labels", true, false},
    {Role::Step, "step", true, false},
    {Role::LearningRate, "learning_rate", true, false},
    {Role::Apply, "apply", true, false},
    {Role::GradScale, "grad_scale", true, false},
    {Role::Seed, "seed", true, false},
    {Role::Parameter, "parameter", true, true},
    {Role::OptimizerState, "optimizer_state", true, true},
    {Role::Accumulator, "accumulator", true, true},
    {Role::State, "state", true, true},
    {Role::Output, "output", false, true},
    {Role::Loss, "loss", false, true},
    {Role::GradNorm, "grad_norm", false, true},
    {Role::Metric, "metric", false, true},
};

const RoleInfo &infoOf(Role role) {
  for (const RoleInfo &r : kRoles)
    if (r.role == role)
      return r;
  llvm_unreachable("every role is in kRoles");
}

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "program description: " + message);
}

std::optional<DType> dtypeNamed(llvm::StringRef name) {
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64, DType::I1,
                  DType::I32, DType::I64})
    if (tessel::name(t) == name)
      return t;
  return std::nullopt;
}

/// Reads an array of integers; false if `value` is not one.
bool readInts(const llvm::json::Array *value, std::vector<int64_t> &out) {
  if (!value)
    return false;
  for (const llvm::json::Value &v : *value) {
    std::optional<int64_t> i = v.getAsInteger();
    if (!i)
      return false;
    out.push_back(*i);
  }
  return true;
}

bool readStrings(const llvm::json::Array *value,
                 std::vector<std::string> &out) {
  if (!value)
    return false;
  for (const llvm::json::Value &v : *value) {
    std::optional<llvm::StringRef> s = v.getAsString();
    if (!s)
      return false;
    out.push_back(s->str());
  }
  return true;
}

llvm::Error parseTensor(const llvm::json::Object &o, TensorInfo &t) {
  auto name = o.getString("name");
  auto role = o.getString("role");
  auto dtype = o.getString("dtype");
  if (!name || !role || !dtype || !o.getArray("dims"))
    return fail("a tensor lacks name, role, dtype, shape, global_shape or "
                "dims");
  t.name = name->str();
  std::optional<Role> r = parseRole(*role);
  if (!r)
    return fail("tensor '" + t.name + "' has an unknown role '" + *role + "'");
  t.role = *r;
  std::optional<DType> dt = dtypeNamed(*dtype);
  if (!dt)
    return fail("tensor '" + t.name + "' has an unknown dtype " + *dtype);
  t.dtype = *dt;
  std::vector<int64_t> shape, global;
  if (!readInts(o.getArray("shape"), shape) ||
      !readInts(o.getArray("global_shape"), global))
    return fail("tensor '" + t.name +
                "' needs shape and global_shape as integer arrays");
  t.shape.assign(shape.begin(), shape.end());
  t.globalShape.assign(global.begin(), global.end());
  for (const llvm::json::Value &v : *o.getArray("dims")) {
    t.dims.emplace_back();
    if (!readStrings(v.getAsArray(), t.dims.back()))
      return fail("tensor '" + t.name +
                  "': dims must list mesh axis names per dimension");
  }
  if (auto init = o.getString("init"))
    t.init = init->str();
  return llvm::Error::success();
}

llvm::Error parseMesh(const llvm::json::Object &o, MeshInfo &m) {
  auto name = o.getString("name");
  if (!name || !readStrings(o.getArray("axes"), m.shape.axisNames) ||
      !readInts(o.getArray("sizes"), m.shape.axisSizes))
    return fail("a mesh needs a name, axes (strings) and sizes (integers)");
  m.name = name->str();
  if (o.get("devices") && !readInts(o.getArray("devices"), m.devices))
    return fail("mesh '" + m.name + "': devices must be integers");
  return llvm::Error::success();
}

llvm::Error parseGroup(const llvm::json::Object &o, CommGroup &g) {
  auto mesh = o.getString("mesh");
  if (!mesh || !readStrings(o.getArray("axes"), g.axes))
    return fail("a group needs a mesh and axes (strings)");
  g.mesh = mesh->str();
  return llvm::Error::success();
}

llvm::Error parseEntry(const llvm::json::Object &o, Entry &e) {
  auto name = o.getString("name");
  auto symbol = o.getString("symbol");
  auto mesh = o.getString("mesh");
  if (!name || !symbol || !mesh)
    return fail("an entry needs a name, a symbol and a mesh");
  e.name = name->str();
  e.symbol = symbol->str();
  e.mesh = mesh->str();
  if (auto kind = o.getString("kind")) {
    if (*kind != "step" && *kind != "eval" && *kind != "init")
      return fail("entry '" + e.name + "': kind must be step, eval or init, "
                  "not '" + *kind + "'");
    e.kind = kind->str();
  }
  if (!readInts(o.getArray("groups"), e.groups))
    return fail("entry '" + e.name + "' needs groups (integers)");
  if (const llvm::json::Array *regions = o.getArray("regions"))
    for (const llvm::json::Value &r : *regions) {
      std::optional<llvm::StringRef> name = r.getAsString();
      if (!name)
        return fail("entry '" + e.name + "': regions must be names");
      e.regions.push_back(name->str());
    }
  for (auto [key, list] : {std::pair{"arguments", &e.arguments},
                           std::pair{"results", &e.results}}) {
    const llvm::json::Array *items = o.getArray(key);
    if (!items)
      return fail("entry '" + e.name + "' has no " + key);
    for (const llvm::json::Value &item : *items) {
      const llvm::json::Object *t = item.getAsObject();
      if (!t)
        return fail("entry '" + e.name + "': " + key + " must be objects");
      list->emplace_back();
      if (llvm::Error err = parseTensor(*t, list->back()))
        return err;
    }
  }
  return llvm::Error::success();
}

void parseTarget(const llvm::json::Object &o, rt::CpuTarget &target) {
  auto text = [&](llvm::StringRef key) {
    return o.getString(key).value_or("").str();
  };
  target.triple = text("triple");
  target.cpu = text("cpu");
  target.requested = text("requested");
  readStrings(o.getArray("features"), target.features);
}

llvm::json::Array strings(llvm::ArrayRef<std::string> list) {
  llvm::json::Array out;
  for (const std::string &s : list)
    out.push_back(s);
  return out;
}

llvm::json::Array tensors(const std::vector<TensorInfo> &list) {
  llvm::json::Array out;
  for (const TensorInfo &t : list) {
    llvm::json::Array dims;
    for (const auto &axes : t.dims)
      dims.push_back(strings(axes));
    llvm::json::Object o{{"name", t.name},
                         {"role", roleName(t.role)},
                         {"dtype", tessel::name(t.dtype)},
                         {"shape", llvm::json::Array(t.shape)},
                         {"global_shape", llvm::json::Array(t.globalShape)},
                         {"dims", std::move(dims)}};
    if (!t.init.empty())
      o["init"] = t.init;
    out.push_back(std::move(o));
  }
  return out;
}

} // namespace

llvm::StringRef program::roleName(Role role) { return infoOf(role).name; }

std::optional<Role> program::parseRole(llvm::StringRef name) {
  for (const RoleInfo &r : kRoles)
    if (r.name == name)
      return r.role;
  return std::nullopt;
}

bool program::isCarried(Role role) {
  return infoOf(role).argument && infoOf(role).result;
}
bool program::isArgumentRole(Role role) { return infoOf(role).argument; }

std::string program::listRoles(bool arguments) {
  std::string out;
  for (const RoleInfo &r : kRoles)
    if (arguments ? r.argument : r.result)
      out += (out.empty() ? "\"" : ", \"") + r.name.str() + "\"";
  return out;
}
bool program::isResultRole(Role role) { return infoOf(role).result; }

const MeshInfo *Program::findMesh(llvm::StringRef name) const {
  for (const MeshInfo &m : meshes)
    if (m.name == name)
      return &m;
  return nullptr;
}

llvm::Expected<Program> program::parseProgram(llvm::StringRef json) {
  llvm::Expected<llvm::json::Value> value = ::tessel::parseJson(json);
  if (!value)
    return fail(llvm::toString(value.takeError()));
  const llvm::json::Object *root = value->getAsObject();
  if (!root)
    return fail("not a JSON object");
  Program p;
  std::optional<int64_t> version = root->getInteger("version");
  if (!version)
    return fail("no version; it was written before version " +
                llvm::Twine(kProgramVersion) +
                " (recompile the program with this Tessel)");
  p.version = *version;
  if (p.version != kProgramVersion)
    return fail("version " + llvm::Twine(p.version) + ", but this Tessel " +
                "reads version " + llvm::Twine(kProgramVersion) +
                " (recompile the program with this Tessel)");
  for (llvm::StringRef key : {"meshes", "groups", "entries"}) {
    const llvm::json::Array *items = root->getArray(key);
    if (!items)
      return fail("no " + key);
    for (const llvm::json::Value &item : *items) {
      const llvm::json::Object *o = item.getAsObject();
      if (!o)
        return fail(key + " must be objects");
      llvm::Error err =
          key == "meshes"   ? parseMesh(*o, p.meshes.emplace_back())
          : key == "groups" ? parseGroup(*o, p.groups.emplace_back())
                            : parseEntry(*o, p.entries.emplace_back());
      if (err)
        return std::move(err);
    }
  }
  if (const llvm::json::Object *target = root->getObject("target"))
    parseTarget(*target, p.target);
  if (auto flops = root->getNumber("model_flops_per_step"))
    p.modelFlopsPerStep = *flops;
  if (llvm::Error err = validateProgram(p))
    return std::move(err);
  return p;
}

std::string program::printProgram(const Program &p) {
  llvm::json::Array meshes, groups, entries;
  for (const MeshInfo &m : p.meshes) {
    llvm::json::Object o{{"name", m.name},
                         {"axes", strings(m.shape.axisNames)},
                         {"sizes", llvm::json::Array(m.shape.axisSizes)}};
    if (!m.devices.empty())
      o["devices"] = llvm::json::Array(m.devices);
    meshes.push_back(std::move(o));
  }
  for (const CommGroup &g : p.groups)
    groups.push_back(
        llvm::json::Object{{"mesh", g.mesh}, {"axes", strings(g.axes)}});
  for (const Entry &e : p.entries) {
    llvm::json::Object o{{"name", e.name},
                         {"symbol", e.symbol},
                         {"mesh", e.mesh},
                         {"groups", llvm::json::Array(e.groups)},
                         {"arguments", tensors(e.arguments)},
                         {"results", tensors(e.results)}};
    if (e.kind != "step")
      o["kind"] = e.kind;
    if (!e.regions.empty())
      o["regions"] = strings(e.regions);
    entries.push_back(std::move(o));
  }
  llvm::json::Object root{{"version", p.version},
                          {"meshes", std::move(meshes)},
                          {"groups", std::move(groups)},
                          {"entries", std::move(entries)}};
  if (!p.target.cpu.empty())
    root["target"] =
        llvm::json::Object{{"triple", p.target.triple},
                           {"cpu", p.target.cpu},
                           {"requested", p.target.requested},
                           {"features", strings(p.target.features)}};
  if (p.modelFlopsPerStep > 0)
    root["model_flops_per_step"] = p.modelFlopsPerStep;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(root));
  return text;
}
