//===- SupportTest.cpp - dtypes, meshes, random numbers, safetensors ------===//

#include "tessel/support/DType.h"
#include "tessel/support/Mesh.h"
#include "tessel/support/Random.h"
#include "tessel/support/SafeTensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace tessel;

namespace {

TEST(DType, BF16RoundsToNearestEven) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(roundToFloat(DType::BF16, 1.0 + std::ldexp(1.0, -8)), 1.0);
  // 1 + 3*2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to even (1+2^-6).
  EXPECT_EQ(roundToFloat(DType::BF16, 1.0 + 3 * std::ldexp(1.0, -8)),
            1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(roundToFloat(DType::BF16, 1.0 + 1.5 * std::ldexp(1.0, -8)),
            1.0 + std::ldexp(1.0, -7));
  EXPECT_TRUE(std::isinf(roundToFloat(DType::BF16, 3.5e38)));
  EXPECT_TRUE(std::isnan(roundToFloat(DType::BF16, std::nan(""))));
}

TEST(DType, F16RoundsAndOverflows) {
  EXPECT_EQ(roundToFloat(DType::F16, 1.0 / 3.0), 0.333251953125);
  EXPECT_EQ(roundToFloat(DType::F16, 65504.0), 65504.0);
  EXPECT_TRUE(std::isinf(roundToFloat(DType::F16, 70000.0)));
  EXPECT_EQ(roundToFloat(DType::F16, std::ldexp(1.0, -24)),
            std::ldexp(1.0, -24)); // smallest subnormal
}

TEST(DType, IntegersWrap) {
  EXPECT_EQ(wrapToInt(DType::I32, int64_t(1) << 31), INT32_MIN);
  EXPECT_EQ(wrapToInt(DType::I1, 5), 1);
  EXPECT_EQ(wrapToInt(DType::I64, -3), -3);
}

TEST(Mesh, GroupsFollowListedAxisOrder) {
  MeshShape mesh{{"dp", "tp"}, {2, 4}};
  EXPECT_EQ(mesh.numDevices(), 8);
  EXPECT_EQ(mesh.coords(6), (Shape{1, 2}));
  EXPECT_EQ(mesh.group(6, {"tp"}), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(mesh.group(6, {"dp"}), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(mesh.groupIndex(6, {"dp", "tp"}), 6);
  // Over (tp, dp) the index is row-major with dp minor.
  EXPECT_EQ(mesh.groupIndex(6, {"tp", "dp"}), 2 * 2 + 1);
  EXPECT_EQ(mesh.group(1, {"tp", "dp"}),
            (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
}

TEST(Random, DeterministicAndIndependentOfShape) {
  HostTensor a(DType::F32, {4, 6}), b(DType::F32, {24});
  InitSpec spec{InitSpec::Normal, 0.02, 0};
  fillTensor(a, spec, 1, streamOf("w"));
  fillTensor(b, spec, 1, streamOf("w"));
  EXPECT_EQ(a.f, b.f);
  HostTensor c(DType::F32, {24});
  fillTensor(c, spec, 2, streamOf("w"));
  EXPECT_NE(a.f, c.f);
}

TEST(Random, NormalHasTheRequestedMoments) {
  HostTensor t(DType::F64, {200000});
  fillTensor(t, InitSpec{InitSpec::Normal, 2.0, 0}, 7, 3);
  double sum = 0, sq = 0;
  for (double v : t.f) {
    sum += v;
    sq += v * v;
  }
  double mean = sum / t.size(), var = sq / t.size() - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.02);
}

TEST(Random, IntRangeStaysInRange) {
  HostTensor t(DType::I32, {10000});
  fillTensor(t, InitSpec{InitSpec::IntRange, 3, 7}, 1, 1);
  std::vector<int> seen(10, 0);
  for (int64_t v : t.i) {
    ASSERT_GE(v, 3);
    ASSERT_LT(v, 7);
    seen[v]++;
  }
  for (int v = 3; v < 7; ++v)
    EXPECT_GT(seen[v], 2000);
}

TEST(Random, InitSpecsParseAndPrint) {
  for (const char *text : {"zeros", "ones", "normal:0.02", "uniform:-1:1",
                           "int:0:256", "bernoulli:0.5"}) {
    llvm::Expected<InitSpec> spec = parseInitSpec(text);
    ASSERT_TRUE(static_cast<bool>(spec)) << text;
    EXPECT_EQ(printInitSpec(*spec), text);
  }
  for (const char *bad : {"", "normal", "normal:x", "normal:-1", "int:5:5",
                          "uniform:2:1", "bernoulli:2", "gauss:1"}) {
    llvm::Expected<InitSpec> spec = parseInitSpec(bad);
    EXPECT_FALSE(static_cast<bool>(spec)) << bad;
    llvm::consumeError(spec.takeError());
  }
}

NamedTensors sample() {
  NamedTensors t;
  HostTensor a(DType::F32, {2, 3});
  for (int k = 0; k < 6; ++k)
    a.f[k] = k * 0.5;
  HostTensor b(DType::BF16, {2});
  b.f = {1.5, -2.0};
  HostTensor c(DType::I64, {});
  c.i = {-7};
  HostTensor d(DType::I1, {3});
  d.i = {1, 0, 1};
  HostTensor e(DType::F16, {1});
  e.f = {0.333251953125};
  t.tensors = {{"a", a}, {"b", b}, {"c", c}, {"d", d}, {"e", e}};
  t.metadata["format"] = "pt";
  return t;
}

TEST(SafeTensors, RoundTrips) {
  NamedTensors t = sample();
  std::string bytes = serializeSafeTensors(t);
  llvm::Expected<NamedTensors> back = parseSafeTensors(bytes, "mem");
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  ASSERT_EQ(back->tensors.size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(back->tensors[k].first, t.tensors[k].first);
    EXPECT_EQ(back->tensors[k].second.shape, t.tensors[k].second.shape);
    EXPECT_EQ(back->tensors[k].second.f, t.tensors[k].second.f);
    EXPECT_EQ(back->tensors[k].second.i, t.tensors[k].second.i);
  }
  EXPECT_EQ(back->metadata["format"], "pt");
  // The data section is 8-byte aligned, as the format recommends.
  uint64_t headerSize;
  std::memcpy(&headerSize, bytes.data(), 8);
  EXPECT_EQ((8 + headerSize) % 8, 0u);
}

/// A file with `header` as JSON and `data` after it.
std::string image(llvm::StringRef header, llvm::StringRef data = "") {
  std::string out(8, '\0');
  uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header.str() + data.str();
}

std::string error(llvm::StringRef bytes) {
  llvm::Expected<NamedTensors> t = parseSafeTensors(bytes, "bad.safetensors");
  if (t)
    return "parsed";
  return llvm::toString(t.takeError());
}

TEST(SafeTensors, RejectsMalformedFiles) {
  EXPECT_NE(error("abc").find("too short"), std::string::npos);
  std::string huge(8, '\xff');
  EXPECT_NE(error(huge).find("runs past the end"), std::string::npos);
  EXPECT_NE(error(image("{not json")).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(error(image("[1]")).find("JSON object"), std::string::npos);
  EXPECT_NE(error(image(R"({"w":{"dtype":"Q8","shape":[1],"data_offsets":[0,1]}})",
                        "x"))
                .find("tensor 'w': unsupported dtype 'Q8'"),
            std::string::npos);
  EXPECT_NE(error(image(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                        "1234"))
                .find("tensor 'w': data_offsets [0, 8] are outside the 4 data"),
            std::string::npos);
  EXPECT_NE(error(image(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
                        "12345678"))
                .find("needs 12 bytes but data_offsets give 8"),
            std::string::npos);
  EXPECT_NE(error(image(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})"))
                .find("non-negative"),
            std::string::npos);
  EXPECT_NE(error(image(R"({"w":{"dtype":"F32","data_offsets":[0,0]}})"))
                .find("missing shape"),
            std::string::npos);
  EXPECT_NE(error(image(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})",
                        "1234"))
                .find("outside"),
            std::string::npos);
  EXPECT_NE(error(image(R"({"__metadata__":{"a":1}})"))
                .find("not a string"),
            std::string::npos);
  // Truncating a valid file anywhere in its data is caught.
  std::string good = serializeSafeTensors(sample());
  EXPECT_NE(error(llvm::StringRef(good).drop_back(3)).find("outside"),
            std::string::npos);
}

TEST(SafeTensors, WritesAtomically) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tessel-st", dir));
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "x.safetensors");
  ASSERT_FALSE(static_cast<bool>(writeSafeTensors(path, sample())));
  llvm::Expected<NamedTensors> back = readSafeTensors(path);
  ASSERT_TRUE(static_cast<bool>(back));
  EXPECT_EQ(back->tensors.size(), 5u);
  // No temporary file is left behind.
  std::error_code ec;
  int entries = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    ++entries;
  EXPECT_EQ(entries, 1);
  // Writing into a missing directory fails with the path named.
  llvm::SmallString<128> missing(dir);
  llvm::sys::path::append(missing, "no", "such", "x.safetensors");
  llvm::Error err = writeSafeTensors(missing, sample());
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("x.safetensors"),
            std::string::npos);
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
