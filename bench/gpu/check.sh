#!/usr/bin/env bash
# The GPU checks, on a machine with one NVIDIA GPU, PyTorch and Python (no
# LLVM, MLIR or Tessel build needed): run bench/gpu/prepare.sh on a build
# machine first and bring its payload along.
#
#   bench/gpu/check.sh OUT [PAYLOAD]    (default PAYLOAD: build/gpu-payload)
#
# Writes OUT/report.json: (1) the op zoo on the GPU against the
# interpreter; (2) GPT train steps (f32 and mixed bf16, AdamW) against the
# CPU executable's losses; (3) a compiled 8192^3 bf16 GEMM next to
# torch.matmul; (4) a ~350M-parameter GPT step: tokens/s, MFU, peak memory;
# (5) a custom call's GPU entry (examples/extending/FusedGelu.cu) trained 3
# steps against the interpreter running its CPU entry; (6) the f32 GPT
# started torchrun-style as one process over NCCL, losses against the CPU's,
# traced (the GPU rows' CUDA-event spans).
set -uo pipefail
OUT=${1:?usage: bench/gpu/check.sh OUT [PAYLOAD]}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
P=${2:-$ROOT/build/gpu-payload}
mkdir -p "$OUT"
exec python3 "$ROOT/bench/gpu/check.py" --payload "$P" --out "$OUT/report.json" ${TESSEL_GPU_ONLY:+--only "$TESSEL_GPU_ONLY"}
