//===- CpuFeatures.cpp - this machine's instruction-set features ----------===//
//
// x86: the CPUID bits of each feature LLVM can generate code for (Intel SDM
// vol. 2A "CPUID", AMD APM vol. 3 appendix E), and XCR0 for the register
// state the OS saves (AVX needs it for YMM, AVX-512 for ZMM and the mask
// registers, AMX for tiles). aarch64: the kernel's hardware capabilities.
//
//===----------------------------------------------------------------------===//

#include "tessel/runtime/CpuFeatures.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

using namespace tessel;
using namespace tessel::rt;

namespace {

/// Register state a feature needs the OS to save (XCR0 bits).
enum State : uint64_t {
  None = 0,
  Avx = 0x6,         // SSE + AVX
  Avx512 = 0xe6,     // + opmask, ZMM_Hi256, Hi16_ZMM
  Amx = 0x60000 | 6, // + TILECFG, TILEDATA
};

enum Reg { Eax, Ebx, Ecx, Edx };

struct X86Feature {
  const char *name;
  uint32_t leaf, subleaf;
  Reg reg;
  unsigned bit;
  State state;
};

// clang-format off
constexpr X86Feature kX86Features[] = {
  {"x87", 1, 0, Edx, 0, None},       {"cx8", 1, 0, Edx, 8, None},
  {"cmov", 1, 0, Edx, 15, None},     {"mmx", 1, 0, Edx, 23, None},
  {"fxsr", 1, 0, Edx, 24, None},     {"sse", 1, 0, Edx, 25, None},
  {"sse2", 1, 0, Edx, 26, None},     {"sse3", 1, 0, Ecx, 0, None},
  {"pclmul", 1, 0, Ecx, 1, None},    {"ssse3", 1, 0, Ecx, 9, None},
  {"fma", 1, 0, Ecx, 12, Avx},       {"cx16", 1, 0, Ecx, 13, None},
  {"sse4.1", 1, 0, Ecx, 19, None},   {"sse4.2", 1, 0, Ecx, 20, None},
  {"crc32", 1, 0, Ecx, 20, None},    {"movbe", 1, 0, Ecx, 22, None},
  {"popcnt", 1, 0, Ecx, 23, None},   {"aes", 1, 0, Ecx, 25, None},
  {"xsave", 1, 0, Ecx, 26, None},    {"avx", 1, 0, Ecx, 28, Avx},
  {"f16c", 1, 0, Ecx, 29, Avx},      {"rdrnd", 1, 0, Ecx, 30, None},
  {"fsgsbase", 7, 0, Ebx, 0, None},  {"bmi", 7, 0, Ebx, 3, None},
  {"avx2", 7, 0, Ebx, 5, Avx},       {"bmi2", 7, 0, Ebx, 8, None},
  {"invpcid", 7, 0, Ebx, 10, None},  {"rtm", 7, 0, Ebx, 11, None},
  {"avx512f", 7, 0, Ebx, 16, Avx512}, {"evex512", 7, 0, Ebx, 16, Avx512},
  {"avx512dq", 7, 0, Ebx, 17, Avx512}, {"rdseed", 7, 0, Ebx, 18, None},
  {"adx", 7, 0, Ebx, 19, None},      {"avx512ifma", 7, 0, Ebx, 21, Avx512},
  {"clflushopt", 7, 0, Ebx, 23, None}, {"clwb", 7, 0, Ebx, 24, None},
  {"avx512cd", 7, 0, Ebx, 28, Avx512}, {"sha", 7, 0, Ebx, 29, None},
  {"avx512bw", 7, 0, Ebx, 30, Avx512}, {"avx512vl", 7, 0, Ebx, 31, Avx512},
  {"avx512vbmi", 7, 0, Ecx, 1, Avx512}, {"pku", 7, 0, Ecx, 3, None},
  {"waitpkg", 7, 0, Ecx, 5, None},   {"avx512vbmi2", 7, 0, Ecx, 6, Avx512},
  {"shstk", 7, 0, Ecx, 7, None},     {"gfni", 7, 0, Ecx, 8, None},
  {"vaes", 7, 0, Ecx, 9, Avx},       {"vpclmulqdq", 7, 0, Ecx, 10, Avx},
  {"avx512vnni", 7, 0, Ecx, 11, Avx512},
  {"avx512bitalg", 7, 0, Ecx, 12, Avx512},
  {"avx512vpopcntdq", 7, 0, Ecx, 14, Avx512},
  {"rdpid", 7, 0, Ecx, 22, None},    {"kl", 7, 0, Ecx, 23, None},
  {"cldemote", 7, 0, Ecx, 25, None}, {"movdiri", 7, 0, Ecx, 27, None},
  {"movdir64b", 7, 0, Ecx, 28, None}, {"enqcmd", 7, 0, Ecx, 29, None},
  {"uintr", 7, 0, Edx, 5, None},
  {"avx512vp2intersect", 7, 0, Edx, 8, Avx512},
  {"serialize", 7, 0, Edx, 14, None}, {"tsxldtrk", 7, 0, Edx, 16, None},
  {"pconfig", 7, 0, Edx, 18, None},  {"amx-bf16", 7, 0, Edx, 22, Amx},
  {"avx512fp16", 7, 0, Edx, 23, Avx512}, {"amx-tile", 7, 0, Edx, 24, Amx},
  {"amx-int8", 7, 0, Edx, 25, Amx},  {"sha512", 7, 1, Eax, 0, Avx},
  {"sm3", 7, 1, Eax, 1, Avx},        {"sm4", 7, 1, Eax, 2, Avx},
  {"raoint", 7, 1, Eax, 3, None},    {"avxvnni", 7, 1, Eax, 4, Avx},
  {"avx512bf16", 7, 1, Eax, 5, Avx512}, {"cmpccxadd", 7, 1, Eax, 7, None},
  {"amx-fp16", 7, 1, Eax, 21, Amx},  {"hreset", 7, 1, Eax, 22, None},
  {"avxifma", 7, 1, Eax, 23, Avx},   {"avxvnniint8", 7, 1, Edx, 4, Avx},
  {"avxneconvert", 7, 1, Edx, 5, Avx}, {"amx-complex", 7, 1, Edx, 8, Amx},
  {"avxvnniint16", 7, 1, Edx, 10, Avx}, {"prefetchi", 7, 1, Edx, 14, None},
  {"xsaveopt", 0xd, 1, Eax, 0, None}, {"xsavec", 0xd, 1, Eax, 1, None},
  {"xsaves", 0xd, 1, Eax, 3, None},
  {"sahf", 0x80000001, 0, Ecx, 0, None}, {"lzcnt", 0x80000001, 0, Ecx, 5, None},
  {"sse4a", 0x80000001, 0, Ecx, 6, None}, {"prfchw", 0x80000001, 0, Ecx, 8, None},
  {"xop", 0x80000001, 0, Ecx, 11, Avx}, {"lwp", 0x80000001, 0, Ecx, 15, None},
  {"fma4", 0x80000001, 0, Ecx, 16, Avx}, {"tbm", 0x80000001, 0, Ecx, 21, None},
  {"mwaitx", 0x80000001, 0, Ecx, 29, None},
  {"64bit", 0x80000001, 0, Edx, 29, None},
  {"clzero", 0x80000008, 0, Ebx, 0, None}, {"rdpru", 0x80000008, 0, Ebx, 4, None},
  {"wbnoinvd", 0x80000008, 0, Ebx, 9, None},
};
// clang-format on

// AVX10 is one CPUID bit and a version (leaf 0x24).
const char *const kAvx10Features[] = {"avx10.1", "avx10.1-512", "avx10.2",
                                      "avx10.2-512"};

// The x86-64 micro-architecture levels, as LLVM defines them, cumulative.
const std::vector<std::pair<const char *, std::vector<const char *>>>
    kX86Levels = {
        {"x86-64", {"cmov", "cx8", "fxsr", "mmx", "sse", "sse2", "x87"}},
        {"x86-64-v2",
         {"cx16", "sahf", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3",
          "crc32"}},
        {"x86-64-v3",
         {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe",
          "xsave"}},
        {"x86-64-v4",
         {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}},
};

#if defined(__aarch64__) && defined(__linux__)
struct ArmFeature {
  const char *name;
  int which; // AT_HWCAP or AT_HWCAP2
  unsigned long mask;
};
const ArmFeature kArmFeatures[] = {
    {"fp-armv8", AT_HWCAP, HWCAP_FP},    {"neon", AT_HWCAP, HWCAP_ASIMD},
    {"aes", AT_HWCAP, HWCAP_AES},        {"sha2", AT_HWCAP, HWCAP_SHA2},
    {"crc", AT_HWCAP, HWCAP_CRC32},      {"lse", AT_HWCAP, HWCAP_ATOMICS},
    {"fullfp16", AT_HWCAP, HWCAP_FPHP},  {"rdm", AT_HWCAP, HWCAP_ASIMDRDM},
    {"rcpc", AT_HWCAP, HWCAP_LRCPC},     {"dotprod", AT_HWCAP, HWCAP_ASIMDDP},
    {"sve", AT_HWCAP, HWCAP_SVE},
#ifdef HWCAP2_SVE2
    {"sve2", AT_HWCAP2, HWCAP2_SVE2},
#endif
#ifdef HWCAP2_I8MM
    {"i8mm", AT_HWCAP2, HWCAP2_I8MM},
#endif
#ifdef HWCAP2_BF16
    {"bf16", AT_HWCAP2, HWCAP2_BF16},
#endif
};
#endif

bool contains(const std::vector<std::string> &list, const std::string &s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

#if defined(__x86_64__) || defined(__i386__)
std::vector<std::string> x86Features() {
  auto query = [](uint32_t leaf, uint32_t subleaf, uint32_t regs[4]) {
    regs[0] = regs[1] = regs[2] = regs[3] = 0;
    uint32_t max = __get_cpuid_max(leaf & 0x80000000u, nullptr);
    if (leaf > max)
      return;
    __cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
  };
  uint32_t one[4];
  query(1, 0, one);
  uint64_t xcr0 = 0;
  if (one[Ecx] & (1u << 27)) { // OSXSAVE: XGETBV is available
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (uint64_t(hi) << 32) | lo;
  }
  std::vector<std::string> found;
  for (const X86Feature &f : kX86Features) {
    uint32_t regs[4];
    query(f.leaf, f.subleaf, regs);
    if ((regs[f.reg] >> f.bit & 1) && (xcr0 & f.state) == f.state)
      found.push_back(f.name);
  }
  uint32_t seven[4], avx10[4];
  query(7, 1, seven);
  query(0x24, 0, avx10);
  if ((seven[Edx] >> 19 & 1) && (xcr0 & Avx512) == Avx512) {
    unsigned version = avx10[Ebx] & 0xff;
    bool wide = avx10[Ebx] >> 18 & 1;
    for (unsigned v = 1; v <= 2 && v <= version; ++v) {
      found.push_back("avx10." + std::to_string(v));
      if (wide)
        found.push_back("avx10." + std::to_string(v) + "-512");
    }
  }
  return found;
}
#endif

} // namespace

std::string rt::hostArch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

std::vector<std::string> rt::hostCpuFeatures() {
#if defined(__x86_64__) || defined(__i386__)
  return x86Features();
#elif defined(__aarch64__) && defined(__linux__)
  std::vector<std::string> found;
  for (const ArmFeature &f : kArmFeatures)
    if (getauxval(f.which) & f.mask)
      found.push_back(f.name);
  return found;
#else
  return {};
#endif
}

bool rt::isCheckableCpuFeature(const std::string &arch,
                               const std::string &feature) {
  if (arch == "x86_64")
    return std::any_of(std::begin(kX86Features), std::end(kX86Features),
                       [&](const X86Feature &f) { return feature == f.name; }) ||
           std::any_of(std::begin(kAvx10Features), std::end(kAvx10Features),
                       [&](const char *f) { return feature == f; });
#if defined(__aarch64__) && defined(__linux__)
  if (arch == "aarch64")
    return std::any_of(std::begin(kArmFeatures), std::end(kArmFeatures),
                       [&](const ArmFeature &f) { return feature == f.name; });
#endif
  return false;
}

std::string rt::portableCpuFor(const std::string &arch,
                               const std::vector<std::string> &host) {
  if (arch == "aarch64")
    return "generic";
  if (arch != "x86_64")
    return "";
  std::string best;
  for (const auto &[level, features] : kX86Levels) {
    for (const char *f : features)
      if (!contains(host, f))
        return best;
    best = level;
  }
  return best;
}

std::string rt::cpuMismatch(const CpuTarget &target, const std::string &arch,
                            const std::vector<std::string> &host) {
  std::string targetArch = target.triple.substr(0, target.triple.find('-'));
  if (!targetArch.empty() && targetArch != arch)
    return "this program was compiled for " + targetArch +
           " and this machine is " + arch;
  std::vector<std::string> missing;
  for (const std::string &f : target.features)
    if (!contains(host, f))
      missing.push_back(f);
  if (missing.empty())
    return "";
  std::string list;
  for (const std::string &f : missing)
    list += (list.empty() ? "" : ", ") + f;
  std::string message = "this program was compiled for CPU '" + target.cpu +
                        "' (tessel-compile --cpu " + target.requested +
                        "), but this machine lacks " + list +
                        "; recompile it with --cpu native on this machine";
  std::string portable = portableCpuFor(arch, host);
  if (!portable.empty())
    message += ", or --cpu " + portable + " to run on it and machines like it";
  return message;
}
