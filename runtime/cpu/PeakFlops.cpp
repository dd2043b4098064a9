//===- PeakFlops.cpp - dense matmul peaks of known GPUs -------------------===//
//
// NVIDIA's data sheets, dense TFLOP/s (the sheets' "with sparsity" figures
// halved). Entries are matched in order by a substring of the device name,
// so the more specific names come first.
//
//===----------------------------------------------------------------------===//

#include "tessel/runtime/PeakFlops.h"

using namespace tessel::rt;

namespace {
struct Peak {
  const char *name; ///< a substring of the device name
  double half, tf32, f32;
};

constexpr Peak kPeaks[] = {
    {"H100 PCIe", 756.5, 378.0, 51.2},
    {"H100 NVL", 835.5, 417.5, 60.0},
    {"H100", 989.4, 494.7, 66.9},  // SXM5 ("H100 80GB HBM3")
    {"H200", 989.4, 494.7, 66.9},  // SXM
    {"GH200", 989.4, 494.7, 66.9},
    {"H800", 989.4, 494.7, 66.9},
    {"A100", 312.0, 156.0, 19.5},  // SXM4 and PCIe
    {"A800", 312.0, 156.0, 19.5},
    {"L40S", 362.1, 183.0, 91.6},
    {"L40", 181.0, 90.5, 90.5},
    {"L4", 121.0, 60.0, 30.3},
};
} // namespace

double tessel::rt::gpuPeakFlops(const std::string &deviceName,
                                MatmulPrecision precision) {
  for (const Peak &p : kPeaks)
    if (deviceName.find(p.name) != std::string::npos)
      return 1e12 * (precision == MatmulPrecision::Half   ? p.half
                     : precision == MatmulPrecision::TF32 ? p.tf32
                                                          : p.f32);
  return 0;
}
