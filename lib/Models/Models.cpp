//===- Models.cpp - mlp, gpt and llama in the tessel dialect --------------===//
//
// Layouts follow the checkpoints users bring: GPT-2 stores Conv1D weights as
// [in, out]; Llama stores nn.Linear weights as [out, in]. GPT-2's fused
// c_attn is split into q_proj/k_proj/v_proj (its columns [0:H], [H:2H],
// [2H:3H]) so that tensor parallelism splits heads, not the q/k/v boundary.
//
//===----------------------------------------------------------------------===//

#include "tessel/models/Models.h"

#include "Layers.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::models;

llvm::Error models::fail(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

std::string models::normal(double std) {
  return llvm::formatv("normal:{0:e6}", std).str();
}

/// Causal self-attention on x [B, S, H] given q/k/v as [B, S, heads, hd].
/// Returns [B, S, heads * hd].
Value models::attend(Emitter &e, Value q, Value k, Value v) {
  ArrayRef<int64_t> qs = Emitter::shapeOf(q);
  int64_t B = qs[0], S = qs[1], nh = qs[2], hd = qs[3];
  q = e.transpose(q, {0, 2, 1, 3}); // [B, nh, S, hd]
  k = e.transpose(k, {0, 2, 1, 3});
  v = e.transpose(v, {0, 2, 1, 3});
  // The core (scores, mask, softmax, probabilities x values) holds the
  // S x S activations: tagged for selective recomputation (recompute=tagged).
  Operation *core = e.mark();
  Value scores = e.op<DotGeneralOp>(q, k, ArrayRef<int64_t>{0, 1},
                                    ArrayRef<int64_t>{0, 1},
                                    ArrayRef<int64_t>{3}, ArrayRef<int64_t>{3});
  scores = e.scale(scores, 1.0 / std::sqrt(double(hd)));
  // Causal mask: position i attends to j <= i.
  Type i32 = e.b().getI32Type();
  Value rows = e.op<IotaOp>(e.tensor({S, S}, i32), int64_t(0));
  Value cols = e.op<IotaOp>(e.tensor({S, S}, i32), int64_t(1));
  Value mask = e.op<CompareOp>(CompareDirection::ge, rows, cols);
  mask = e.broadcast(mask, {B, nh, S, S}, {2, 3});
  Value neg = e.splat({B, nh, S, S}, -std::numeric_limits<double>::infinity());
  scores = e.op<SelectOp>(mask, scores, neg);
  Value probs = e.dropout(e.op<SoftmaxOp>(scores, int64_t(3)));
  Value out = e.op<DotGeneralOp>(probs, v, ArrayRef<int64_t>{0, 1},
                                 ArrayRef<int64_t>{0, 1}, ArrayRef<int64_t>{3},
                                 ArrayRef<int64_t>{2}); // [B, nh, S, hd]
  e.tagSince(core, TesselDialect::kRecomputeAttrName,
             e.b().getStringAttr("attention"));
  out = e.transpose(out, {0, 2, 1, 3});
  return e.reshape(out, {B, S, nh * hd});
}

Value models::loss(Emitter &e, Value logits, Value targets) {
  return e.op<SoftmaxCrossEntropyOp>(logits, targets, int64_t(-100),
                                     LossReduction::mean);
}

static Value layerNorm(Emitter &e, Value x, StringRef prefix, int64_t H) {
  Value g = e.param((prefix + ".weight").str(), {H}, {"embed"}, "ones");
  Value b = e.param((prefix + ".bias").str(), {H}, {"embed"}, "zeros");
  return e.op<LayerNormOp>(x, g, b, APFloat(1e-5));
}

static llvm::Error buildGpt(Emitter &e, const ModelConfig &c) {
  int64_t B = c.batch, S = c.seq, H = c.hidden, V = c.vocab, nh = c.heads;
  int64_t F = c.ffn ? c.ffn : 4 * H, hd = H / nh;
  Type i32 = e.b().getI32Type();
  std::string tokenInit = llvm::formatv("int:0:{0}", V).str();
  Value tokens = e.data("input_ids", {B, S}, i32, {"batch", "seq"}, tokenInit);
  Value targets = e.data("labels", {B, S}, i32, {"batch", "seq"}, tokenInit);

  Value wte = e.param("wte.weight", {V, H}, {"vocab", "embed"}, normal(0.02));
  Value wpe = e.param("wpe.weight", {S, H}, {"pos", "embed"}, normal(0.01));
  Value x = e.op<GatherOp>(wte, tokens, int64_t(0)); // [B, S, H]
  x = e.op<AddOp>(x, e.broadcast(wpe, {B, S, H}, {1, 2}));
  x = e.tag(e.dropout(x), {"act_batch", "act_seq", "act_embed"});
  std::string projInit = normal(0.02 / std::sqrt(2.0 * c.layers));
  for (int64_t l = 0; l < c.layers; ++l) {
    Operation *layerStart = e.mark();
    std::string p = llvm::formatv("h.{0}.", l).str();
    Value a = layerNorm(e, x, p + "ln_1", H);
    auto proj = [&](StringRef name) {
      Value w = e.param(p + "attn." + name.str() + ".weight", {H, H},
                        {"embed", "heads"}, normal(0.02));
      Value bias = e.param(p + "attn." + name.str() + ".bias", {H},
                           {"heads"}, "zeros");
      return e.reshape(e.addBias(e.matmul(a, w, 0), bias), {B, S, nh, hd});
    };
    Value q = proj("q_proj"), k = proj("k_proj"), v = proj("v_proj");
    Value o = attend(e, q, k, v);
    Value wo = e.param(p + "attn.c_proj.weight", {H, H}, {"heads", "embed"},
                       projInit);
    Value bo = e.param(p + "attn.c_proj.bias", {H}, {"embed"}, "zeros");
    x = e.tag(e.op<AddOp>(x, e.dropout(e.addBias(e.matmul(o, wo, 0), bo))),
              {"act_batch", "act_seq", "act_embed"});

    Value m = layerNorm(e, x, p + "ln_2", H);
    Value wfc = e.param(p + "mlp.c_fc.weight", {H, F}, {"embed", "mlp"},
                        normal(0.02));
    Value bfc = e.param(p + "mlp.c_fc.bias", {F}, {"mlp"}, "zeros");
    Value hfc = e.op<GeluOp>(e.addBias(e.matmul(m, wfc, 0), bfc),
                             GeluApproximation::tanh);
    Value wp = e.param(p + "mlp.c_proj.weight", {F, H}, {"mlp", "embed"},
                       projInit);
    Value bp = e.param(p + "mlp.c_proj.bias", {H}, {"embed"}, "zeros");
    x = e.tag(e.op<AddOp>(x, e.dropout(e.addBias(e.matmul(hfc, wp, 0), bp))),
              {"act_batch", "act_seq", "act_embed"});
    e.tagSince(layerStart, TesselDialect::kLayerAttrName,
               e.b().getI64IntegerAttr(l));
  }
  x = layerNorm(e, x, "ln_f", H);
  Value head = c.tiedEmbeddings
                   ? wte
                   : e.param("lm_head.weight", {V, H}, {"vocab", "embed"},
                             normal(0.02));
  Value logits = e.matmul(x, head, 1); // [B, S, V]
  e.finish({loss(e, logits, targets)}, {"loss"});
  return llvm::Error::success();
}

RotaryTables models::rotaryTables(Emitter &e, int64_t S, int64_t hd,
                                  double theta) {
  FullPrecision keep(e);
  Type model = e.elementType();
  Type wide = model.isF64() ? model : e.b().getF32Type();
  int64_t half = hd / 2;
  // inv_freq[i] = theta^(-2i/hd), rounded to the table's type as Hugging
  // Face rounds it; the only constant, hd/2 values.
  SmallVector<APFloat> inv;
  for (int64_t i = 0; i < half; ++i) {
    APFloat f(std::pow(theta, -2.0 * double(i) / double(hd)));
    bool lost;
    f.convert(cast<FloatType>(wide).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &lost);
    inv.push_back(f);
  }
  Value invFreq = e.op<ConstantOp>(
      DenseElementsAttr::get(e.tensor({half}, wide), inv));
  Value pos = e.op<IotaOp>(e.tensor({S, half}, wide), int64_t(0));
  Value angles =
      e.op<MulOp>(pos, e.broadcast(invFreq, {S, half}, {1})); // [S, hd/2]
  Value both = e.op<ConcatenateOp>(ValueRange{angles, angles}, int64_t(1));
  auto table = [&](Value t) {
    return wide == model ? t : e.op<ConvertOp>(e.tensor({S, hd}), t);
  };
  return {table(e.op<CosOp>(both)), table(e.op<SinOp>(both))};
}

/// Rotary embedding (Hugging Face's rotate_half form) of x [B, S, n, hd].
Value models::rotary(Emitter &e, Value x, const RotaryTables &tables) {
  ArrayRef<int64_t> s = Emitter::shapeOf(x);
  int64_t B = s[0], S = s[1], n = s[2], hd = s[3], half = hd / 2;
  Value cosT = e.broadcast(tables.cos, {B, S, n, hd}, {1, 3});
  Value sinT = e.broadcast(tables.sin, {B, S, n, hd}, {1, 3});
  Value x1 = e.op<SliceOp>(x, ArrayRef<int64_t>{0, 0, 0, 0},
                           ArrayRef<int64_t>{B, S, n, half},
                           ArrayRef<int64_t>{1, 1, 1, 1});
  Value x2 = e.op<SliceOp>(x, ArrayRef<int64_t>{0, 0, 0, half},
                           ArrayRef<int64_t>{B, S, n, hd},
                           ArrayRef<int64_t>{1, 1, 1, 1});
  Value rotated = e.op<ConcatenateOp>(ValueRange{e.op<NegOp>(x2), x1},
                                      int64_t(3));
  return e.op<AddOp>(e.op<MulOp>(x, cosT), e.op<MulOp>(rotated, sinT));
}

Value models::rmsNorm(Emitter &e, Value v, StringRef name) {
  int64_t H = Emitter::shapeOf(v).back();
  Value g = e.param(name, {H}, {"embed"}, "ones");
  return e.op<RmsNormOp>(v, g, APFloat(1e-5));
}

Value models::llamaMlp(Emitter &e, Value m, StringRef prefix, int64_t F) {
  int64_t H = Emitter::shapeOf(m).back();
  std::string p = prefix.str(), init = normal(0.02);
  Value wg = e.param(p + "mlp.gate_proj.weight", {F, H}, {"mlp", "embed"},
                     init);
  Value wu = e.param(p + "mlp.up_proj.weight", {F, H}, {"mlp", "embed"},
                     init);
  Value wd = e.param(p + "mlp.down_proj.weight", {H, F}, {"embed", "mlp"},
                     init);
  Value gated = e.op<MulOp>(e.op<SiluOp>(e.matmul(m, wg, 1)),
                            e.matmul(m, wu, 1));
  return e.matmul(gated, wd, 1);
}

/// Llama's self-attention on the normed a [B, S, H] (rotary, grouped-query).
static Value llamaAttention(Emitter &e, Value a, StringRef prefix,
                            const ModelConfig &c,
                            const RotaryTables &tables) {
  int64_t B = c.batch, S = c.seq, H = c.hidden, nh = c.heads;
  int64_t kvh = c.kvHeads ? c.kvHeads : nh, hd = H / nh;
  std::string p = prefix.str(), init = normal(0.02);
  auto proj = [&](StringRef name, int64_t heads, StringRef axis) {
    Value w = e.param(p + "self_attn." + name.str() + ".weight",
                      {heads * hd, H}, {axis, "embed"}, init);
    return e.reshape(e.matmul(a, w, 1), {B, S, heads, hd});
  };
  Value q = rotary(e, proj("q_proj", nh, "heads"), tables);
  Value k = rotary(e, proj("k_proj", kvh, "kv_heads"), tables);
  Value v = proj("v_proj", kvh, "kv_heads");
  if (kvh != nh) { // grouped-query attention: repeat each kv head
    int64_t rep = nh / kvh;
    auto repeat = [&](Value t) {
      Value b5 = e.broadcast(t, {B, S, kvh, rep, hd}, {0, 1, 2, 4});
      return e.reshape(b5, {B, S, nh, hd});
    };
    k = repeat(k);
    v = repeat(v);
  }
  Value o = attend(e, q, k, v);
  Value wo = e.param(p + "self_attn.o_proj.weight", {H, nh * hd},
                     {"embed", "heads"}, init);
  return e.matmul(o, wo, 1);
}

Value models::llamaDecoder(Emitter &e, const ModelConfig &c,
                           const FeedForward &ffn) {
  int64_t B = c.batch, S = c.seq, H = c.hidden, V = c.vocab;
  Type i32 = e.b().getI32Type();
  std::string tokenInit = llvm::formatv("int:0:{0}", V).str();
  Value tokens = e.data("input_ids", {B, S}, i32, {"batch", "seq"}, tokenInit);
  Value targets = e.data("labels", {B, S}, i32, {"batch", "seq"}, tokenInit);
  std::string init = normal(0.02);

  Value embed = e.param("model.embed_tokens.weight", {V, H},
                        {"vocab", "embed"}, init);
  Value x = e.tag(e.dropout(e.op<GatherOp>(embed, tokens, int64_t(0))),
                  {"act_batch", "act_seq", "act_embed"});
  // One pair of tables for every layer, outside the layers: a pipeline
  // stage or a recomputed layer computes it again rather than receiving or
  // keeping it.
  RotaryTables tables =
      rotaryTables(e, S, H / c.heads, c.ropeTheta);
  for (int64_t l = 0; l < c.layers; ++l) {
    Operation *layerStart = e.mark();
    std::string p = llvm::formatv("model.layers.{0}.", l).str();
    Value a = rmsNorm(e, x, p + "input_layernorm.weight");
    x = e.tag(e.op<AddOp>(x, e.dropout(llamaAttention(e, a, p, c, tables))),
              {"act_batch", "act_seq", "act_embed"});
    Value m = rmsNorm(e, x, p + "post_attention_layernorm.weight");
    x = e.tag(e.op<AddOp>(x, e.dropout(ffn(m, p, l))),
              {"act_batch", "act_seq", "act_embed"});
    e.tagSince(layerStart, TesselDialect::kLayerAttrName,
               e.b().getI64IntegerAttr(l));
  }
  x = rmsNorm(e, x, "model.norm.weight");
  Value head = c.tiedEmbeddings
                   ? embed
                   : e.param("lm_head.weight", {V, H}, {"vocab", "embed"},
                             init);
  return loss(e, e.matmul(x, head, 1), targets);
}

static llvm::Error buildLlama(Emitter &e, const ModelConfig &c) {
  // Llama's FFN width: 2/3 of 4H rounded up to a multiple of 32.
  int64_t F = c.ffn ? c.ffn : ((8 * c.hidden / 3 + 31) / 32) * 32;
  Value ce = llamaDecoder(e, c, [&](Value m, StringRef prefix, int64_t) {
    return llamaMlp(e, m, prefix, F);
  });
  e.finish({ce}, {"loss"});
  return llvm::Error::success();
}

static llvm::Error buildMlp(Emitter &e, const ModelConfig &c) {
  std::vector<int64_t> widths = c.widths;
  if (widths.empty()) {
    int64_t F = c.ffn ? c.ffn : 4 * c.hidden;
    widths.push_back(c.hidden);
    for (int64_t l = 0; l + 1 < c.layers; ++l)
      widths.push_back(F);
    widths.push_back(c.loss == "ce" ? c.vocab : c.hidden);
  }
  if (widths.size() < 2)
    return fail("mlp needs at least an input and an output width");
  int64_t B = c.batch, out = widths.back();
  // Alternate logical names so that a "mlp": "tp" rule gives Megatron's
  // column-then-row split; the output is "classes" (or "embed" for MSE).
  auto axisOf = [&](size_t i) -> StringRef {
    if (i + 1 == widths.size())
      return c.loss == "ce" ? "classes" : "embed";
    return i % 2 ? "mlp" : "embed";
  };
  Value x = e.data("x", {B, widths[0]}, e.elementType(), {"batch", "embed"},
                   "normal:1");
  Value targets =
      c.loss == "ce"
          ? e.data("labels", {B}, e.b().getI32Type(), {"batch"},
                   llvm::formatv("int:0:{0}", out).str())
          : e.data("targets", {B, out}, e.elementType(), {"batch", "embed"},
                   "normal:1");
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    Operation *layerStart = e.mark();
    std::string p = llvm::formatv("layers.{0}.", l).str();
    Value w = e.param(p + "weight", {widths[l], widths[l + 1]},
                      {axisOf(l), axisOf(l + 1)},
                      normal(1.0 / std::sqrt(double(widths[l]))));
    Value b = e.param(p + "bias", {widths[l + 1]}, {axisOf(l + 1)}, "zeros");
    x = e.addBias(e.matmul(x, w, 0), b);
    if (l + 2 < widths.size())
      x = e.dropout(e.op<GeluOp>(x, GeluApproximation::tanh));
    e.tagSince(layerStart, TesselDialect::kLayerAttrName,
               e.b().getI64IntegerAttr(l));
  }
  Value result;
  if (c.loss == "ce") {
    result = loss(e, x, targets);
  } else {
    Value diff = e.op<SubOp>(x, targets);
    result = e.op<ReduceOp>(ReduceKind::mean, e.op<MulOp>(diff, diff),
                            ArrayRef<int64_t>{0, 1});
  }
  e.finish({result}, {"loss"});
  return llvm::Error::success();
}

llvm::Expected<OwningOpRef<ModuleOp>>
models::buildModel(MLIRContext *context, const ModelConfig &c) {
  context->loadDialect<TesselDialect, func::FuncDialect>();
  auto positive = [](int64_t v) { return v > 0; };
  if (!positive(c.layers) || !positive(c.hidden) || !positive(c.batch) ||
      !positive(c.seq) || !positive(c.vocab) || !positive(c.heads))
    return fail("--layers, --hidden, --heads, --vocab, --seq and --batch "
                "must be positive");
  if (c.kind != "mlp" && c.hidden % c.heads != 0)
    return fail(llvm::formatv("--hidden {0} is not divisible by --heads {1}",
                              c.hidden, c.heads));
  if (c.kind == "llama" || c.kind == "moe") {
    int64_t kvh = c.kvHeads ? c.kvHeads : c.heads;
    if (c.heads % kvh != 0)
      return fail(llvm::formatv("--heads {0} is not a multiple of --kv-heads "
                                "{1}",
                                c.heads, kvh));
    if ((c.hidden / c.heads) % 2 != 0)
      return fail("rotary embeddings need an even head dimension");
  }
  if (!(c.dropout >= 0 && c.dropout < 1))
    return fail(llvm::formatv("--dropout {0} must be in [0, 1)",
                              llvm::format("%g", c.dropout)));
  if (c.kind == "mlp" && c.loss != "ce" && c.loss != "mse")
    return fail("--loss must be ce or mse");
  Builder b(context);
  Type elt = llvm::StringSwitch<Type>(c.dtype)
                 .Case("f32", b.getF32Type())
                 .Case("bf16", b.getBF16Type())
                 .Case("f16", b.getF16Type())
                 .Case("f64", b.getF64Type())
                 .Default(Type());
  if (!elt)
    return fail("--dtype must be f32, bf16, f16 or f64, not '" + c.dtype +
                "'");
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  Emitter e(*module, "forward", elt);
  e.setDropout(c.dropout);
  llvm::Error err = c.kind == "gpt"     ? buildGpt(e, c)
                    : c.kind == "llama" ? buildLlama(e, c)
                    : c.kind == "moe"   ? buildMixtral(e, c)
                    : c.kind == "mlp"
                        ? buildMlp(e, c)
                        : fail("unknown model '" + c.kind +
                               "'; expected mlp, gpt, llama or moe");
  if (err)
    return std::move(err);
  return module;
}
