//===- Kernels.cpp - the calls compiled programs make (runtime/Abi.h) -----===//
//
// Collectives decode their descriptor and reduce the
// shape-aware operation (gather along a dimension, ...) to the flat
// primitives of the communicator, rearranging blocks locally where the
// dimension is not the outermost.
//
//===----------------------------------------------------------------------===//

#include "RankContext.h"
#include "Timer.h"
#include "tessel/runtime/Abi.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

using namespace tessel;
using namespace tessel::rt;

namespace {
thread_local RankContext *current = nullptr;
} // namespace

RankContext &rt::currentRank() {
  if (!current) {
    static RankContext single;
    return single;
  }
  return *current;
}

void rt::setCurrentRank(RankContext *context) { current = context; }

/// The communicator group `id` of the program (runtime/Abi.h), or null on
/// one device without a communicator (every group has one member).
static const Group *groupOf(RankContext &ctx, int64_t id) {
  if (!ctx.comm)
    return nullptr;
  if (id < 0 || id >= int64_t(ctx.groups.size()) || !ctx.groups[id])
    ctx.comm->fail("this program communicates in group " + std::to_string(id) +
                   ", which this rank is not a member of; the program is "
                   "damaged");
  return ctx.groups[id].get();
}

extern "C" int64_t tessel_rt_axis_index(int64_t group) {
  const Group *g = groupOf(currentRank(), group);
  return g ? g->index() : 0;
}

extern "C" void tessel_rt_region(int64_t index) {
  RankContext &ctx = currentRank();
  if (index == ctx.failAtRegion)
    failForTesting(ctx.comm->rank(), "schedule action " +
                                         (*ctx.regionNames)[index],
                   ctx.failMode);
  if (!ctx.tracing)
    return;
  closeRegion(ctx);
  ctx.openRegion = index;
  ctx.regionStartUs = ctx.nowUs();
}

void rt::closeRegion(RankContext &ctx) {
  if (ctx.openRegion < 0)
    return;
  const std::vector<std::string> *names = ctx.regionNames;
  std::string name = names && ctx.openRegion < int64_t(names->size())
                         ? (*names)[ctx.openRegion]
                         : "region " + std::to_string(ctx.openRegion);
  ctx.events.push_back({std::move(name), "pipeline", ctx.regionStartUs,
                        ctx.nowUs() - ctx.regionStartUs});
  ctx.openRegion = -1;
}

void rt::failForTesting(int64_t rank, const std::string &where,
                        const std::string &mode) {
  // One write, so lines of other ranks cannot cut into it.
  llvm::errs() << ("rank " + std::to_string(rank) + ": failing at " + where +
                   " (--fail-rank, for testing)\n");
  llvm::errs().flush();
  if (mode == "hang")
    std::this_thread::sleep_for(std::chrono::hours(1));
  std::_Exit(3); // dies without a word to the others
}

void rt::completeCommunication(RankContext &ctx) {
  for (auto &[bytes, request] : ctx.sends)
    ctx.comm->wait(request);
  ctx.sends.clear();
  if (!ctx.collectives.empty())
    ctx.comm->fail(std::to_string(ctx.collectives.size()) +
                   " collective(s) the program started were never waited "
                   "for; the program is damaged");
}

namespace {
/// Splits `shape` around `dim`: elements before, at, and after it.
void around(const int64_t *shape, int64_t rank, int64_t dim, int64_t &outer,
            int64_t &size, int64_t &inner) {
  outer = inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  size = shape[dim];
  for (int64_t d = dim + 1; d < rank; ++d)
    inner *= shape[d];
}

/// "all_reduce 4096 B", for trace events.
std::string collectiveName(const int64_t *desc, DType type, const char *phase) {
  static const char *names[] = {"all_reduce", "all_gather", "reduce_scatter",
                                "all_to_all", "collective_permute"};
  int64_t opcode = desc[TESSEL_RT_DESC_OPCODE];
  int64_t bytes = byteSize(type);
  for (int64_t d = 0; d < desc[TESSEL_RT_DESC_RANK]; ++d)
    bytes *= desc[TESSEL_RT_DESC_SHAPES + d];
  return std::string(opcode >= 0 && opcode < 5 ? names[opcode] : "?") + " " +
         std::to_string(bytes) + " B" + phase;
}

/// A collective's shapes and parameters, decoded from its descriptor.
struct Decoded {
  int64_t opcode, rank, width, inCount = 1, outCount = 1;
  const int64_t *inShape, *outShape, *params;
  ReduceOp kind;
  Decoded(const int64_t *desc, DType type)
      : opcode(desc[TESSEL_RT_DESC_OPCODE]), rank(desc[TESSEL_RT_DESC_RANK]),
        width(byteSize(type)), inShape(desc + TESSEL_RT_DESC_SHAPES),
        outShape(inShape + rank), params(outShape + rank),
        kind(static_cast<ReduceOp>(desc[TESSEL_RT_DESC_KIND])) {
    for (int64_t d = 0; d < rank; ++d) {
      inCount *= inShape[d];
      outCount *= outShape[d];
    }
  }
};

/// all_gather along a dimension that is not the outermost: gathered into
/// staging, then member j's slab of every outer row put in place.
void startGather(RankContext &ctx, const Decoded &c, const void *in,
                 char *dst, const Group &group, InFlightCollective &op) {
  int64_t outer, size, inner, n = group.size();
  around(c.inShape, c.rank, c.params[0], outer, size, inner);
  int64_t block = size * inner * c.width; // one member's slab per outer row
  int64_t bytes = c.inCount * c.width;
  if (outer == 1) {
    op.request = ctx.comm->startAllGather(in, dst, bytes, group);
    return;
  }
  op.staging.resize(n * bytes);
  const char *all = op.staging.data();
  op.request = ctx.comm->startAllGather(in, op.staging.data(), bytes, group);
  op.unpack = [=] {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < n; ++j)
        std::memcpy(dst + (o * n + j) * block, all + (j * outer + o) * block,
                    block);
  };
}

/// reduce_scatter along a dimension that is not the outermost: member j's
/// piece of every outer row made contiguous in staging, then reduced.
void startScatter(RankContext &ctx, const Decoded &c, const char *src,
                  void *out, DType type, const Group &group,
                  InFlightCollective &op) {
  int64_t outer, size, inner, n = group.size();
  around(c.inShape, c.rank, c.params[0], outer, size, inner);
  int64_t piece = size / n, block = piece * inner; // elements per row
  if (outer == 1) {
    op.request =
        ctx.comm->startReduceScatter(src, out, block, type, c.kind, group);
    return;
  }
  op.staging.resize(c.inCount * c.width);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(op.staging.data() + (j * outer + o) * block * c.width,
                  src + (o * size + j * piece) * inner * c.width,
                  block * c.width);
  op.request = ctx.comm->startReduceScatter(op.staging.data(), out,
                                            outer * block, type, c.kind, group);
}

/// all_to_all: block j of staging = the input's j-th piece along `split`;
/// after the exchange, member j's piece goes to position j along `concat`.
void startAllToAll(RankContext &ctx, const Decoded &c, const char *src,
                   char *dst, const Group &group, InFlightCollective &op) {
  int64_t n = group.size(), split = c.params[0], concat = c.params[1];
  int64_t width = c.width, bytes = c.inCount * width;
  int64_t so, ss, si;
  around(c.inShape, c.rank, split, so, ss, si);
  int64_t sp = ss / n, pieceCount = so * sp * si;
  op.staging.resize(2 * bytes); // packed input, then received blocks
  char *packed = op.staging.data(), *received = packed + bytes;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t o = 0; o < so; ++o)
      std::memcpy(packed + (j * pieceCount + o * sp * si) * width,
                  src + (o * ss + j * sp) * si * width, sp * si * width);
  op.request =
      ctx.comm->startAllToAll(packed, received, pieceCount * width, group);
  std::vector<int64_t> pieceShape(c.inShape, c.inShape + c.rank);
  pieceShape[split] = sp;
  int64_t co, cs, ci;
  around(pieceShape.data(), c.rank, concat, co, cs, ci);
  op.unpack = [=] {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t o = 0; o < co; ++o)
        std::memcpy(dst + (o * n * cs + j * cs) * ci * width,
                    received + (j * pieceCount + o * cs * ci) * width,
                    cs * ci * width);
  };
}

/// Starts the collective `desc` describes (runtime/Abi.h); its result is in
/// `out` once `finishCollective` has run.
InFlightCollective startCollective(RankContext &ctx, const int64_t *desc,
                                   const void *in, void *out, DType type) {
  Decoded c(desc, type);
  InFlightCollective op;
  op.out = out;
  const Group *g = groupOf(ctx, desc[TESSEL_RT_DESC_GROUP]);
  if (!g) {
    std::memcpy(out, in, c.outCount * c.width);
    return op;
  }
  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  switch (c.opcode) {
  case TESSEL_RT_ALL_REDUCE:
    op.request =
        ctx.comm->startAllReduce(in, out, c.inCount, type, c.kind, *g);
    break;
  case TESSEL_RT_ALL_GATHER:
    startGather(ctx, c, in, dst, *g, op);
    break;
  case TESSEL_RT_REDUCE_SCATTER:
    startScatter(ctx, c, src, out, type, *g, op);
    break;
  case TESSEL_RT_ALL_TO_ALL:
    startAllToAll(ctx, c, src, dst, *g, op);
    break;
  case TESSEL_RT_COLLECTIVE_PERMUTE: {
    int64_t pairs = c.params[2];
    std::vector<int64_t> list(c.params + 3, c.params + 3 + 2 * pairs);
    op.request =
        ctx.comm->startPermute(in, out, c.inCount * c.width, list, *g);
    break;
  }
  default:
    ctx.comm->fail("unknown collective opcode " + std::to_string(c.opcode));
  }
  return op;
}

void finishCollective(RankContext &ctx, InFlightCollective &op) {
  if (!op.request.complete())
    ctx.comm->wait(op.request);
  if (op.unpack)
    op.unpack();
}

void collective(const int64_t *desc, const void *in, void *out, DType type) {
  RankContext &ctx = currentRank();
  Timer t(ctx.commSeconds, "communication",
          [&] { return collectiveName(desc, type, ""); });
  InFlightCollective op = startCollective(ctx, desc, in, out, type);
  finishCollective(ctx, op);
}

void collectiveStart(const int64_t *desc, const void *in, void *out,
                     DType type) {
  RankContext &ctx = currentRank();
  Timer t(ctx.commSeconds, "communication",
          [&] { return collectiveName(desc, type, " (start)"); });
  ctx.collectives.push_back(startCollective(ctx, desc, in, out, type));
}

void collectiveWait(const int64_t *desc, void *out, DType type) {
  RankContext &ctx = currentRank();
  Timer t(ctx.commSeconds, "communication",
          [&] { return collectiveName(desc, type, " (wait)"); });
  auto op = llvm::find_if(ctx.collectives, [&](const InFlightCollective &c) {
    return c.out == out;
  });
  if (op == ctx.collectives.end())
    ctx.comm->fail("this program waits for a collective it did not start "
                   "(" + collectiveName(desc, type, "") +
                   "); the program is damaged");
  finishCollective(ctx, *op);
  ctx.collectives.erase(op);
}
} // namespace

namespace {
/// The bytes of the tensor a send or receive descriptor describes.
int64_t messageBytes(const int64_t *desc, DType type) {
  int64_t bytes = byteSize(type);
  for (int64_t d = 0; d < desc[TESSEL_RT_DESC_RANK]; ++d)
    bytes *= desc[TESSEL_RT_DESC_SHAPES + d];
  return bytes;
}

/// The (peer, channel) parameters of a send or receive descriptor.
std::pair<int64_t, int64_t> peerAndChannel(const int64_t *desc) {
  const int64_t *params =
      desc + TESSEL_RT_DESC_SHAPES + 2 * desc[TESSEL_RT_DESC_RANK];
  return {params[0], params[1]};
}

[[noreturn]] void noCommunicator(const char *what) {
  llvm::errs() << "error: a compiled " << what
               << " ran outside a run of ranks (no communicator)\n";
  std::_Exit(1);
}

void send(const int64_t *desc, const void *in, DType type) {
  RankContext &ctx = currentRank();
  int64_t bytes = messageBytes(desc, type);
  Timer t(ctx.commSeconds, "communication",
          [&] { return "send " + std::to_string(bytes) + " B"; });
  const Group *g = groupOf(ctx, desc[TESSEL_RT_DESC_GROUP]);
  auto [peer, channel] = peerAndChannel(desc);
  if (!g)
    noCommunicator("send");
  // The bytes travel from a copy, so the program may reuse its buffer and
  // go on to its receives before the peer has received.
  const char *p = static_cast<const char *>(in);
  auto &[copy, request] = ctx.sends.emplace_back(
      std::vector<char>(p, p + bytes), Request());
  request = ctx.comm->startSend(copy.data(), bytes, peer, channel, *g);
}

void recv(const int64_t *desc, void *out, DType type) {
  RankContext &ctx = currentRank();
  // A schedule action's receives come before its region mark: waiting for
  // a peer is the pipeline's bubble, not part of the previous action.
  if (ctx.tracing)
    closeRegion(ctx);
  int64_t bytes = messageBytes(desc, type);
  Timer t(ctx.commSeconds, "communication",
          [&] { return "recv " + std::to_string(bytes) + " B"; });
  const Group *g = groupOf(ctx, desc[TESSEL_RT_DESC_GROUP]);
  auto [peer, channel] = peerAndChannel(desc);
  if (!g)
    noCommunicator("recv");
  ctx.comm->recv(out, bytes, peer, channel, *g);
}
} // namespace

#define TESSEL_RT_DEFINE_COLLECTIVE(suffix, T, dtype)                          \
  extern "C" void tessel_rt_collective_##suffix(                               \
      TESSEL_RT_MEMREF(T, in), TESSEL_RT_MEMREF(T, out),                       \
      TESSEL_RT_MEMREF(int64_t, desc)) {                                       \
    collective(desc + desc_offset, in + in_offset, out + out_offset, dtype);   \
  }                                                                            \
  extern "C" void tessel_rt_collective_start_##suffix(                         \
      TESSEL_RT_MEMREF(T, in), TESSEL_RT_MEMREF(T, out),                       \
      TESSEL_RT_MEMREF(int64_t, desc)) {                                       \
    collectiveStart(desc + desc_offset, in + in_offset, out + out_offset,      \
                    dtype);                                                    \
  }                                                                            \
  extern "C" void tessel_rt_collective_wait_##suffix(                          \
      TESSEL_RT_MEMREF(T, in), TESSEL_RT_MEMREF(T, out),                       \
      TESSEL_RT_MEMREF(int64_t, desc)) {                                       \
    collectiveWait(desc + desc_offset, out + out_offset, dtype);               \
  }                                                                            \
  extern "C" void tessel_rt_send_##suffix(TESSEL_RT_MEMREF(T, in),             \
                                          TESSEL_RT_MEMREF(int64_t, desc)) {   \
    send(desc + desc_offset, in + in_offset, dtype);                           \
  }                                                                            \
  extern "C" void tessel_rt_recv_##suffix(TESSEL_RT_MEMREF(T, out),            \
                                          TESSEL_RT_MEMREF(int64_t, desc)) {   \
    recv(desc + desc_offset, out + out_offset, dtype);                         \
  }
TESSEL_RT_DEFINE_COLLECTIVE(f32, float, DType::F32)
TESSEL_RT_DEFINE_COLLECTIVE(f64, double, DType::F64)
TESSEL_RT_DEFINE_COLLECTIVE(bf16, uint16_t, DType::BF16)
TESSEL_RT_DEFINE_COLLECTIVE(f16, uint16_t, DType::F16)
TESSEL_RT_DEFINE_COLLECTIVE(i64, int64_t, DType::I64)
TESSEL_RT_DEFINE_COLLECTIVE(i32, int32_t, DType::I32)
TESSEL_RT_DEFINE_COLLECTIVE(i1, uint8_t, DType::I1)
