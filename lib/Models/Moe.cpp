//===- Moe.cpp - Mixtral: routed experts in the tessel dialect ------------===//
//
// Routing follows GShard and Switch, written with one_hot, cumsum and
// dot_general so that the ordinary sharding rules partition it. Each
// sequence is one routing group (G = batch): a token competes for expert
// capacity only with tokens of its own sequence, so the result does not
// depend on how the batch is split over devices.
//
//   logits [B,S,E] (f32, or f64 in an f64 model) -> softmax -> top_k -> gates (renormalized for
//   k > 1); for each choice j (all first choices before any second one):
//   position of the token in its expert = cumsum over the sequence of the
//   expert's one-hot, plus the expert's count from earlier choices; kept
//   when below the capacity C = ceil(S * k / E * capacity_factor), so later
//   tokens are dropped first. dispatch[B,S,E,C] is 1 where token s takes
//   slot c of expert e; combine is dispatch times the gate.
//
// The experts' input is dispatch contracted with the tokens over S:
// [B,E,C,H], transposed to [E,B,C,H] and tagged "expert" on E: with the
// batch split over the expert axis that is one all-to-all (the batch's
// split moves to the experts), and the experts' output comes back by
// another before combine contracts it over E and C.
//
//===----------------------------------------------------------------------===//

#include "Layers.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::models;

namespace {
/// The router's decisions for one layer, and what it reports.
struct Routing {
  Value dispatch, combine; // [B, S, E, C], compute type
  Value aux, z;            // scalars (routing type): load-balancing, z-loss
  Value dropped;           // scalar (routing type): choices over capacity
  Value load;              // [E]: token choices routed to each expert
};

/// Routing runs in f32 at least (f64 in an f64 model).
Type routingType(Emitter &e) {
  Type elt = e.elementType();
  return elt.isF64() ? elt : e.b().getF32Type();
}

Value sumOver(Emitter &e, Value v, ArrayRef<int64_t> dims) {
  return e.op<ReduceOp>(ReduceKind::sum, v, dims);
}

/// Routes x [B, S, H] with the router weight [E, H]; capacity C.
Routing route(Emitter &e, Value x, Value router, const ModelConfig &c,
              int64_t C) {
  FullPrecision keep(e);
  int64_t B = c.batch, S = c.seq, E = c.experts, k = c.topK;
  Type f32 = routingType(e), i32 = e.b().getI32Type();
  auto toF32 = [&](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.getElementType() == f32
               ? v
               : e.op<ConvertOp>(t.clone(f32), v);
  };
  Value logits = e.matmul(toF32(x), toF32(router), 1); // [B, S, E]
  Routing r;
  // z-loss: mean over tokens of logsumexp(logits)^2.
  Value max = e.op<ReduceOp>(ReduceKind::max, logits, ArrayRef<int64_t>{2});
  Value shifted = e.op<SubOp>(logits, e.broadcast(max, {B, S, E}, {0, 1}));
  Value lse = e.op<AddOp>(
      max, e.op<LogOp>(sumOver(e, e.op<ExpOp>(shifted), {2})));
  r.z = e.op<ReduceOp>(ReduceKind::mean, e.op<MulOp>(lse, lse),
                       ArrayRef<int64_t>{0, 1});
  Value probs = e.op<SoftmaxOp>(logits, int64_t(2));
  auto topK = TopKOp::create(e.b(), e.loc(), probs, k);
  Value gates = topK.getValues(); // [B, S, k]
  if (k > 1)
    gates = e.op<DivOp>(gates,
                        e.broadcast(sumOver(e, gates, {2}), {B, S, k}, {0, 1}));
  auto choice = [&](Value v, int64_t j) { // [B, S, k] -> [B, S]
    Value s = e.op<SliceOp>(v, ArrayRef<int64_t>{0, 0, j},
                            ArrayRef<int64_t>{B, S, j + 1},
                            ArrayRef<int64_t>{1, 1, 1});
    return e.reshape(s, {B, S});
  };
  RankedTensorType bsec = e.tensor({B, S, E, C}, f32);
  Value dispatch = e.splat({B, S, E, C}, 0.0, f32);
  Value combine = dispatch;
  Value earlier = e.splat({B, E}, 0.0, f32); // slots taken by earlier choices
  Value kept = e.splat({B, S}, 0.0, f32);
  for (int64_t j = 0; j < k; ++j) {
    Value mask = e.op<OneHotOp>(e.tensor({B, S, E}, f32),
                                choice(topK.getIndices(), j));
    Value pos = e.op<AddOp>(
        e.op<SubOp>(e.op<CumsumOp>(mask, int64_t(1)), mask),
        e.broadcast(earlier, {B, S, E}, {0, 2}));
    earlier = e.op<AddOp>(earlier, sumOver(e, mask, {1}));
    Value slot = sumOver(e, e.op<MulOp>(pos, mask), {2}); // [B, S]
    // Slots at or past C one-hot to zeros: the token choice is dropped.
    Value slotHot = e.op<OneHotOp>(e.tensor({B, S, C}, f32),
                                   e.op<ConvertOp>(e.tensor({B, S}, i32), slot));
    kept = e.op<AddOp>(kept, sumOver(e, slotHot, {2}));
    Value d = e.op<MulOp>(e.broadcast(mask, bsec.getShape(), {0, 1, 2}),
                          e.broadcast(slotHot, bsec.getShape(), {0, 1, 3}));
    dispatch = e.op<AddOp>(dispatch, d);
    combine = e.op<AddOp>(
        combine, e.op<MulOp>(d, e.broadcast(choice(gates, j),
                                            bsec.getShape(), {0, 1})));
  }
  // Switch's load-balancing loss E * sum_i f_i * P_i: f_i the fraction of
  // token choices routed to expert i (before dropping), P_i the mean router
  // probability of expert i.
  double choices = double(B * S * k);
  Value f = e.scale(sumOver(e, earlier, {0}), 1.0 / choices); // [E]
  Value p = e.op<ReduceOp>(ReduceKind::mean, probs, ArrayRef<int64_t>{0, 1});
  r.aux = e.scale(sumOver(e, e.op<MulOp>(f, p), {0}), double(E));
  r.load = sumOver(e, earlier, {0});
  r.dropped = e.op<SubOp>(e.splat({}, choices, f32), sumOver(e, kept, {0, 1}));
  // Both stay where their tokens are (the batch's split): left open, the
  // backward's use of dispatch against the experts' cotangents would pull
  // them to the expert split.
  Type elt = e.elementType();
  auto pinned = [&](Value v) {
    if (elt != f32)
      v = e.op<ConvertOp>(bsec.clone(elt), v);
    return e.tag(v, {"act_batch", "act_seq", "act_expert", "capacity"});
  };
  r.dispatch = pinned(dispatch);
  r.combine = pinned(combine);
  return r;
}

/// The experts' SwiGLU on their inputs xe [E, B, C, H].
Value experts(Emitter &e, Value xe, StringRef prefix, int64_t F) {
  ArrayRef<int64_t> s = Emitter::shapeOf(xe);
  int64_t E = s[0], H = s[3];
  std::string p = (prefix + "block_sparse_moe.experts.").str();
  std::string init = normal(0.02);
  Value w1 = e.param(p + "w1.weight", {E, F, H}, {"expert", "mlp", "embed"},
                     init);
  Value w3 = e.param(p + "w3.weight", {E, F, H}, {"expert", "mlp", "embed"},
                     init);
  Value w2 = e.param(p + "w2.weight", {E, H, F}, {"expert", "embed", "mlp"},
                     init);
  auto batched = [&](Value x, Value w) { // [E,B,C,K] x [E,N,K] -> [E,B,C,N]
    return e.op<DotGeneralOp>(x, w, ArrayRef<int64_t>{0}, ArrayRef<int64_t>{0},
                              ArrayRef<int64_t>{3}, ArrayRef<int64_t>{2});
  };
  Value h = e.op<MulOp>(e.op<SiluOp>(batched(xe, w1)), batched(xe, w3));
  return batched(h, w2);
}
} // namespace

/// One MoE feed-forward block on m [B, S, H]; records its routing in
/// `layers`.
static Value moeBlock(Emitter &e, Value m, StringRef prefix,
                      const ModelConfig &c, int64_t F,
                      SmallVectorImpl<Routing> &layers) {
  int64_t E = c.experts, H = c.hidden;
  int64_t C = int64_t(std::ceil(double(c.seq * c.topK) / double(E) *
                                c.capacityFactor));
  Value router = e.param((prefix + "block_sparse_moe.gate.weight").str(),
                         {E, H}, {"router", "embed"}, normal(0.02));
  Routing r = route(e, m, router, c, C);
  layers.push_back(r);
  // Tokens to their experts' slots: [B, E, C, H], then experts first.
  Value in = e.op<DotGeneralOp>(r.dispatch, m, ArrayRef<int64_t>{0},
                                ArrayRef<int64_t>{0}, ArrayRef<int64_t>{1},
                                ArrayRef<int64_t>{1});
  Value xe = e.tag(e.transpose(in, {1, 0, 2, 3}),
                   {"expert", "expert_batch", "capacity", "act_embed"});
  Value out = experts(e, xe, prefix, F); // [E, B, C, H]
  Value back = e.tag(e.transpose(out, {1, 0, 2, 3}),
                     {"act_batch", "act_expert", "capacity", "act_embed"});
  // Each token's slots weighted by their gates: [B, S, H].
  return e.op<DotGeneralOp>(r.combine, back, ArrayRef<int64_t>{0},
                            ArrayRef<int64_t>{0}, ArrayRef<int64_t>{2, 3},
                            ArrayRef<int64_t>{1, 2});
}

llvm::Error models::buildMixtral(Emitter &e, const ModelConfig &c) {
  if (c.experts < 1)
    return fail("--experts must be positive");
  if (c.topK < 1 || c.topK > c.experts)
    return fail(llvm::formatv("--top-k {0} must be between 1 and --experts "
                              "{1}",
                              c.topK, c.experts));
  if (!(c.capacityFactor > 0))
    return fail("--capacity-factor must be positive");
  if (c.moeEvery < 1)
    return fail("--moe-every must be positive");
  if (c.auxLoss < 0 || c.zLoss < 0)
    return fail("--aux-loss and --z-loss must not be negative");
  if (c.moeEvery > c.layers)
    return fail(llvm::formatv("--moe-every {0} leaves no MoE layer in "
                              "--layers {1}",
                              c.moeEvery, c.layers));
  int64_t F = c.ffn ? c.ffn : ((8 * c.hidden / 3 + 31) / 32) * 32;
  // Running sums over the MoE layers, each added inside its layer, so that
  // a pipeline carries them from stage to stage like the activations.
  Routing sum;
  Value ce = llamaDecoder(e, c, [&](Value m, StringRef prefix, int64_t l) {
    if ((l + 1) % c.moeEvery != 0)
      return llamaMlp(e, m, prefix, F);
    SmallVector<Routing> layer;
    Value out = moeBlock(e, m, prefix, c, F, layer);
    FullPrecision keep(e);
    const Routing &r = layer.front();
    Value load = e.reshape(r.load, {1, c.experts});
    if (!sum.aux) {
      sum = r;
      sum.load = load;
      return out;
    }
    sum.aux = e.op<AddOp>(sum.aux, r.aux);
    sum.z = e.op<AddOp>(sum.z, r.z);
    sum.dropped = e.op<AddOp>(sum.dropped, r.dropped);
    sum.load = e.op<ConcatenateOp>(ValueRange{sum.load, load}, int64_t(0));
    return out;
  });
  Type f32 = routingType(e);
  FullPrecision keep(e);
  Value aux = sum.aux, z = sum.z, dropped = sum.dropped, load = sum.load;
  auto ceType = cast<RankedTensorType>(ce.getType());
  Value ceF32 = ceType.getElementType() == f32
                    ? ce
                    : e.op<ConvertOp>(ceType.clone(f32), ce);
  Value total = e.op<AddOp>(
      ceF32, e.op<AddOp>(e.scale(aux, c.auxLoss), e.scale(z, c.zLoss)));
  if (total.getType() != ce.getType())
    total = e.op<ConvertOp>(ce.getType(), total);
  keep.done();
  e.finish({total, ce, aux, z, dropped, load},
           {"loss", "lm_loss", "aux_loss", "z_loss", "dropped_tokens",
            "expert_load"});
  return llvm::Error::success();
}
