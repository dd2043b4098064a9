//===- Random.cpp - counter-based random numbers and initializers ---------===//

#include "tessel/support/Random.h"

#include <cstdio>

#include "llvm/ADT/SmallVector.h"

#include <cmath>

using namespace tessel;

uint64_t tessel::splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t tessel::streamOf(llvm::StringRef name) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (char c : name) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

double tessel::uniform01(uint64_t seed, uint64_t stream, uint64_t counter) {
  uint64_t key = splitmix64(seed ^ splitmix64(stream));
  return (splitmix64(key + counter) >> 11) * (1.0 / 9007199254740992.0);
}

double tessel::standardNormal(uint64_t seed, uint64_t stream, uint64_t k) {
  double u1 = uniform01(seed, stream, 2 * k);
  double u2 = uniform01(seed, stream, 2 * k + 1);
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * M_PI * u2);
}

llvm::Expected<InitSpec> tessel::parseInitSpec(llvm::StringRef spec) {
  llvm::SmallVector<llvm::StringRef, 3> parts;
  spec.split(parts, ':');
  auto number = [&](size_t idx, double &out) {
    return idx < parts.size() && !parts[idx].getAsDouble(out);
  };
  InitSpec s;
  bool ok = false;
  if (parts[0] == "zeros") {
    s.kind = InitSpec::Zeros;
    ok = parts.size() == 1;
  } else if (parts[0] == "ones") {
    s.kind = InitSpec::Ones;
    ok = parts.size() == 1;
  } else if (parts[0] == "constant") {
    s.kind = InitSpec::Constant;
    ok = parts.size() == 2 && number(1, s.a);
  } else if (parts[0] == "normal") {
    s.kind = InitSpec::Normal;
    ok = parts.size() == 2 && number(1, s.a) && s.a >= 0;
  } else if (parts[0] == "uniform") {
    s.kind = InitSpec::Uniform;
    ok = parts.size() == 3 && number(1, s.a) && number(2, s.b) && s.a <= s.b;
  } else if (parts[0] == "int") {
    s.kind = InitSpec::IntRange;
    ok = parts.size() == 3 && number(1, s.a) && number(2, s.b) && s.a < s.b;
  } else if (parts[0] == "bernoulli") {
    s.kind = InitSpec::Bernoulli;
    ok = parts.size() == 2 && number(1, s.a) && s.a >= 0 && s.a <= 1;
  }
  if (!ok)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "invalid init spec '" + spec.str() +
            "'; expected zeros, ones, constant:V, normal:STD, uniform:LO:HI, int:LO:HI "
            "or bernoulli:P");
  return s;
}

std::string tessel::printInitSpec(const InitSpec &s) {
  auto num = [](double v) {
    std::string str = std::to_string(v);
    str.erase(str.find_last_not_of('0') + 1);
    if (!str.empty() && str.back() == '.')
      str.pop_back();
    return str;
  };
  switch (s.kind) {
  case InitSpec::Zeros: return "zeros";
  case InitSpec::Ones: return "ones";
  case InitSpec::Constant: {
    char exact[40];
    std::snprintf(exact, sizeof(exact), "constant:%.17g", s.a);
    return exact;
  }
  case InitSpec::Normal: return "normal:" + num(s.a);
  case InitSpec::Uniform: return "uniform:" + num(s.a) + ":" + num(s.b);
  case InitSpec::IntRange: return "int:" + num(s.a) + ":" + num(s.b);
  case InitSpec::Bernoulli: return "bernoulli:" + num(s.a);
  }
  return "";
}

void tessel::fillElement(HostTensor &t, int64_t k, const InitSpec &spec,
                         uint64_t seed, uint64_t stream, uint64_t counter) {
  switch (spec.kind) {
  case InitSpec::Zeros:
    t.setF(k, 0.0);
    return;
  case InitSpec::Ones:
    t.setF(k, 1.0);
    return;
  case InitSpec::Constant:
    t.setF(k, spec.a);
    return;
  case InitSpec::Normal:
    t.setF(k, spec.a * standardNormal(seed, stream, counter));
    return;
  case InitSpec::Uniform:
    t.setF(k, spec.a + (spec.b - spec.a) * uniform01(seed, stream, counter));
    return;
  case InitSpec::IntRange: {
    int64_t lo = static_cast<int64_t>(spec.a);
    uint64_t span = static_cast<uint64_t>(static_cast<int64_t>(spec.b) - lo);
    t.setI(k, lo + static_cast<int64_t>(uniform01(seed, stream, counter) *
                                        double(span)));
    return;
  }
  case InitSpec::Bernoulli:
    t.setI(k, uniform01(seed, stream, counter) < spec.a ? 1 : 0);
    return;
  }
}

void tessel::fillTensor(HostTensor &t, const InitSpec &spec, uint64_t seed,
                        uint64_t stream) {
  for (int64_t k = 0, n = t.size(); k < n; ++k)
    fillElement(t, k, spec, seed, stream, k);
}

uint64_t tessel::callSeed(uint64_t runSeed, uint64_t call) {
  return splitmix64(splitmix64(runSeed ^ streamOf("seed")) + call);
}

bool tessel::dropoutKeep(uint64_t seed, uint64_t index, double rate) {
  uint64_t bits = splitmix64(splitmix64(seed) + index) >> 40; // top 24 bits
  return double(bits) / double(1 << 24) >= rate;
}
