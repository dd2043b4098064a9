"""Hugging Face Llama and Mixtral checkpoints and their losses, made without
Tessel.

Writes random weights under the names and layouts of
`LlamaForCausalLM` / `MixtralForCausalLM.save_pretrained` (nn.Linear weights
[out, in]; Mixtral's experts one tensor per expert,
`block_sparse_moe.experts.K.w{1,2,3}.weight`) as a safetensors file written (hf_io.py)
here byte by byte, a token file, and prints the mean cross-entropy of batch
0 computed by a numpy forward in float64 following transformers'
modeling_llama and modeling_mixtral: RMSNorm (epsilon 1e-5, weight after
normalizing), rotary embeddings in the rotate_half form (inv_freq =
theta^(-2i/d)), grouped-query attention (each key/value head repeated),
causal softmax attention scaled by 1/sqrt(d), SwiGLU (down(silu(gate) *
up)); Mixtral's router softmax over experts, the top-k renormalized, every
token to its k experts (no capacity: the compiled model is given a capacity
factor large enough that no token is dropped). Batch 0 is what Tessel's
token files give step 0: row b is the S tokens from b * S, its labels one
further.
"""
import argparse
import json
import os

import numpy as np

from hf_io import batch0, mean_ce, read_model, write_safetensors


def rms_norm(x, g):
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-5) * g


def silu(x):
    return x / (1 + np.exp(-x))


def rotary(x, theta):  # x [B, heads, S, d]
    S, d = x.shape[2], x.shape[3]
    inv = 1.0 / theta ** (np.arange(0, d, 2) / d)
    ang = np.arange(S)[:, None] * inv[None, :]
    emb = np.concatenate([ang, ang], -1)
    half = d // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], -1)
    return x * np.cos(emb) + rotated * np.sin(emb)


def attention(w, p, a, o):
    B, S, H = a.shape
    d = H // o.heads
    q = (a @ w[p + "self_attn.q_proj.weight"].T).reshape(B, S, o.heads, d)
    k = (a @ w[p + "self_attn.k_proj.weight"].T).reshape(B, S, o.kv_heads, d)
    v = (a @ w[p + "self_attn.v_proj.weight"].T).reshape(B, S, o.kv_heads, d)
    q, k, v = (t.transpose(0, 2, 1, 3) for t in (q, k, v))
    q, k = rotary(q, o.theta), rotary(k, o.theta)
    rep = o.heads // o.kv_heads
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    s = np.where(np.tril(np.ones((S, S), dtype=bool)), s, -np.inf)
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    out = (s @ v).transpose(0, 2, 1, 3).reshape(B, S, H)
    return out @ w[p + "self_attn.o_proj.weight"].T


def dense_mlp(w, p, m):
    return (silu(m @ w[p + "mlp.gate_proj.weight"].T) *
            (m @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T


def moe(w, p, m, o):
    q = p + "block_sparse_moe."
    probs = m @ w[q + "gate.weight"].T
    probs = np.exp(probs - probs.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    out = np.zeros_like(m)
    for idx in np.ndindex(*m.shape[:-1]):
        top = np.argsort(-probs[idx], kind="stable")[:o.top_k]
        gates = probs[idx][top] / probs[idx][top].sum()
        for e, g in zip(top, gates):
            x = m[idx]
            e_ = q + "experts.%d." % e
            h = silu(w[e_ + "w1.weight"] @ x) * (w[e_ + "w3.weight"] @ x)
            out[idx] += g * (w[e_ + "w2.weight"] @ h)
    return out


def forward(w, tokens, o):
    x = w["model.embed_tokens.weight"][tokens]
    for n in range(o.layers):
        p = "model.layers.%d." % n
        x = x + attention(w, p, rms_norm(x, w[p + "input_layernorm.weight"]), o)
        m = rms_norm(x, w[p + "post_attention_layernorm.weight"])
        x = x + (moe(w, p, m, o) if o.arch == "mixtral" else dense_mlp(w, p, m))
    x = rms_norm(x, w["model.norm.weight"])
    return x @ w["lm_head.weight"].T


def weights(o, rng):
    H, F, E = o.hidden, o.ffn, o.experts
    d = H // o.heads

    def rand(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    w = {"model.embed_tokens.weight": rand(o.vocab, H),
         "model.norm.weight": 1 + rand(H), "lm_head.weight": rand(o.vocab, H)}
    for n in range(o.layers):
        p = "model.layers.%d." % n
        w.update({
            p + "input_layernorm.weight": 1 + rand(H),
            p + "post_attention_layernorm.weight": 1 + rand(H),
            p + "self_attn.q_proj.weight": rand(o.heads * d, H),
            p + "self_attn.k_proj.weight": rand(o.kv_heads * d, H),
            p + "self_attn.v_proj.weight": rand(o.kv_heads * d, H),
            p + "self_attn.o_proj.weight": rand(H, o.heads * d)})
        if o.arch == "llama":
            w.update({p + "mlp.gate_proj.weight": rand(F, H),
                      p + "mlp.up_proj.weight": rand(F, H),
                      p + "mlp.down_proj.weight": rand(H, F)})
            continue
        q = p + "block_sparse_moe."
        w[q + "gate.weight"] = rand(E, H, scale=1.0)
        for e in range(E):
            w.update({q + "experts.%d.w1.weight" % e: rand(F, H),
                      q + "experts.%d.w3.weight" % e: rand(F, H),
                      q + "experts.%d.w2.weight" % e: rand(H, F)})
    return w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", choices=["llama", "mixtral"], required=True)
    for name in ("layers", "hidden", "heads", "kv-heads", "ffn", "vocab",
                 "seq", "batch"):
        ap.add_argument("--" + name, type=int, required=True)
    ap.add_argument("--experts", type=int, default=4)
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument("--theta", type=float, default=10000.0)
    ap.add_argument("--out",
                    help="a safetensors file, or with --shards a directory")
    ap.add_argument("--shards", type=int, default=0,
                    help="write a Hugging Face sharded directory: "
                    "model-0000k-of-0000n.safetensors, tensors dealt round "
                    "robin, and model.safetensors.index.json")
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", help="instead of writing a model, read this "
                    "Hugging Face file or directory and print its loss on "
                    "batch 0 of --tokens")
    o = ap.parse_args()
    if o.check:
        tokens, labels = batch0(o.tokens, o.batch, o.seq)
        logits = forward(read_model(o.check), tokens, o)
        print("reference loss %.9f" % mean_ce(logits, labels))
        return
    rng = np.random.default_rng(o.seed)
    w = weights(o, rng)
    if o.shards:
        os.makedirs(o.out, exist_ok=True)
        files = ["model-%05d-of-%05d.safetensors" % (k + 1, o.shards)
                 for k in range(o.shards)]
        owner = {name: files[i % o.shards] for i, name in enumerate(w)}
        for f in files:
            write_safetensors(os.path.join(o.out, f),
                              {n: a for n, a in w.items() if owner[n] == f})
        with open(os.path.join(o.out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": sum(a.nbytes for a in w.values())},
                       "weight_map": owner}, f)
    else:
        write_safetensors(o.out, w)
    stream = rng.integers(0, o.vocab, size=o.batch * o.seq + o.seq + 1)
    stream.astype("<u2").tofile(o.tokens)
    tokens, labels = batch0(o.tokens, o.batch, o.seq)
    logits = forward({k: v.astype(np.float64) for k, v in w.items()}, tokens, o)
    loss = mean_ce(logits, labels)
    print("reference loss %.9f" % loss)


if __name__ == "__main__":
    main()
