"""A Hugging Face GPT-2 checkpoint and its loss, made without Tessel.

Writes random GPT-2 weights under the names and layouts of
`GPT2LMHeadModel.save_pretrained` (transformer.* names, Conv1D weights
[in, out], the fused c_attn [H, 3H], a position table longer than the
sequence, the causal-mask buffers attn.bias and attn.masked_bias, the tied
lm_head.weight) as a safetensors file written byte by byte (hf_io.py), a token
file, and prints the mean cross-entropy of batch 0 computed by a numpy
GPT-2 forward in float64, following transformers' modeling_gpt2 (gelu_new,
layer-norm epsilon 1e-5, scores scaled by 1/sqrt(head dim), causal mask,
logits from the tied embedding). Batch 0 is what Tessel's token files give
step 0: row b is the S tokens from b * S, its labels one further.
"""
import argparse

import numpy as np

from hf_io import batch0, mean_ce, read_model, write_safetensors


def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * g + b


def gelu_new(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def forward(w, tokens, layers, heads):
    B, S = tokens.shape
    x = w["transformer.wte.weight"][tokens] + w["transformer.wpe.weight"][:S]
    H = x.shape[-1]
    hd = H // heads
    mask = np.tril(np.ones((S, S), dtype=bool))
    for n in range(layers):
        p = "transformer.h.%d." % n
        a = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = (t.reshape(B, S, heads, hd).transpose(0, 2, 1, 3)
                   for t in np.split(qkv, 3, axis=-1))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
        s = np.where(mask, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        o = (s @ v).transpose(0, 2, 1, 3).reshape(B, S, H)
        x = x + o @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        m = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        f = gelu_new(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        x = x + f @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = layer_norm(x, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"])
    return x @ w["lm_head.weight"].T


def main():
    ap = argparse.ArgumentParser()
    for name in ("layers", "hidden", "heads", "vocab", "seq", "batch",
                 "positions"):
        ap.add_argument("--" + name, type=int, default=0)
    ap.add_argument("--out")
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", help="instead of writing a model, read this "
                    "Hugging Face file or directory and print its loss on "
                    "batch 0 of --tokens")
    o = ap.parse_args()
    if o.check:
        w = read_model(o.check)
        if "lm_head.weight" not in w:
            w["lm_head.weight"] = w["transformer.wte.weight"]
        tokens, labels = batch0(o.tokens, o.batch, o.seq)
        print("reference loss %.9f" % mean_ce(forward(w, tokens, o.layers, o.heads), labels))
        return
    rng = np.random.default_rng(o.seed)
    H, F, P = o.hidden, 4 * o.hidden, o.positions

    def rand(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    w = {"transformer.wte.weight": rand(o.vocab, H),
         "transformer.wpe.weight": rand(P, H)}
    for n in range(o.layers):
        p = "transformer.h.%d." % n
        w.update({
            p + "ln_1.weight": 1 + rand(H), p + "ln_1.bias": rand(H),
            p + "attn.bias": np.tril(np.ones((1, 1, P, P), np.float32)),
            p + "attn.masked_bias": np.full((), -1e4, np.float32),
            p + "attn.c_attn.weight": rand(H, 3 * H),
            p + "attn.c_attn.bias": rand(3 * H),
            p + "attn.c_proj.weight": rand(H, H),
            p + "attn.c_proj.bias": rand(H),
            p + "ln_2.weight": 1 + rand(H), p + "ln_2.bias": rand(H),
            p + "mlp.c_fc.weight": rand(H, F), p + "mlp.c_fc.bias": rand(F),
            p + "mlp.c_proj.weight": rand(F, H), p + "mlp.c_proj.bias": rand(H),
        })
    w["transformer.ln_f.weight"] = 1 + rand(H)
    w["transformer.ln_f.bias"] = rand(H)
    w["lm_head.weight"] = w["transformer.wte.weight"]
    write_safetensors(o.out, w)

    stream = rng.integers(0, o.vocab, size=o.batch * o.seq + o.seq + 1)
    stream.astype("<u2").tofile(o.tokens)
    tokens, labels = batch0(o.tokens, o.batch, o.seq)
    w64 = {k: v.astype(np.float64) for k, v in w.items()}
    w64["lm_head.weight"] = w64["transformer.wte.weight"]
    logits = forward(w64, tokens, o.layers, o.heads)
    loss = mean_ce(logits, labels)
    print("reference loss %.9f" % loss)


if __name__ == "__main__":
    main()
