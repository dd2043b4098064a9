#!/usr/bin/env bash
# Builds what bench/gpu/check.sh runs on a GPU machine, here (no GPU needed):
# executables compiled with --target cuda, and the expected results computed
# by the reference interpreter and the CPU executables.
#
#   bench/gpu/prepare.sh [PAYLOAD]     (default build/gpu-payload)
#
# Then carry PAYLOAD to the GPU machine and run bench/gpu/check.sh OUT there.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${TESSEL_BIN:-$ROOT/build/bin}
P=${1:-$ROOT/build/gpu-payload}
ARCH=${TESSEL_GPU_ARCH:-sm_90}
rm -rf "$P" && mkdir -p "$P"
IN=$ROOT/test/compile/Inputs

# (1) The op zoo and the ops whose results depend on position or order:
# compiled for the GPU, expected results from the interpreter.
for c in op-zoo:zoo softmax-nan:f dropout:f top-k:f cumsum:f float-conversions:f \
         long-reductions:f; do
  file=${c%%:*}; fn=${c##*:}
  "$BIN/tessel-compile" "$IN/$file.mlir" --entry "$fn" --target cuda \
    --gpu-arch "$ARCH" -o "$P/$file"
  "$BIN/tessel-interp" "$IN/$file.mlir" --func "$fn" --save "$P/$file.expected.st" > /dev/null
done

# (2) GPT train steps (AdamW), f32 and mixed bf16: GPU executables, and the
# CPU executables' losses over 5 steps.
GPT="gpt --layers 2 --hidden 128 --heads 4 --vocab 256 --seq 64 --batch 8"
"$BIN/tessel-models" $GPT -o "$P/gpt.mlir"
for v in f32:adamw bf16:"adamw compute-type=bf16"; do
  name=gpt-${v%%:*}; opt=${v#*:}
  "$BIN/tessel-compile" "$P/gpt.mlir" --optimizer "$opt" --target cuda \
    --gpu-arch "$ARCH" -o "$P/$name"
  "$BIN/tessel-compile" "$P/gpt.mlir" --optimizer "$opt" -o "$P/$name.cpu"
  "$P/$name.cpu" --steps 5 > "$P/$name.cpu.txt"
  rm "$P/$name.cpu"
done

# (3) cuBLASLt GEMM 8192^3 bf16 as a compiled program.
"$BIN/tessel-compile" "$ROOT/bench/gpu/gemm.mlir" --entry gemm --target cuda \
  --gpu-arch "$ARCH" -o "$P/gemm"

# (4) A ~350M-parameter GPT step (mixed bf16): tokens/s, MFU, peak memory.
BIG="gpt --layers 24 --hidden 1024 --heads 16 --vocab 50304 --seq 1024 --batch 8"
echo "$BIG" > "$P/gpt350m.args"
"$BIN/tessel-models" $BIG -o "$P/gpt350m.mlir"
"$BIN/tessel-compile" "$P/gpt350m.mlir" --optimizer "adamw compute-type=bf16" \
  --target cuda --gpu-arch "$ARCH" -o "$P/gpt350m"

# (5) For profiles (check.sh with TESSEL_GPU_ONLY=profile): the same widths,
# two layers, traced per kernel.
PROF="gpt --layers 2 --hidden 1024 --heads 16 --vocab 50304 --seq 1024 --batch 8"
"$BIN/tessel-models" $PROF -o "$P/gptprof.mlir"
"$BIN/tessel-compile" "$P/gptprof.mlir" --optimizer "adamw compute-type=bf16" \
  --target cuda --gpu-arch "$ARCH" -o "$P/gptprof"
# (6) A custom call's GPU entry (examples/extending/FusedGelu.cu, built
# with nvcc) in the example's MLP on one GPU, against the interpreter
# running the CPU entries (FusedGelu.c) for 3 SGD steps.
EXT=$ROOT/examples/extending
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
sed 's/"dp"=2, "tp"=2/"dp"=1, "tp"=1/' "$EXT/model.mlir" > "$P/custom.mlir"
"$NVCC" -shared -Xcompiler -fPIC -O2 -arch="$ARCH" -I"$ROOT/include" \
  "$EXT/FusedGelu.cu" -o "$P/libgelu-cuda.so"
cc -shared -fPIC -O2 -I"$ROOT/include" "$EXT/FusedGelu.c" -o "$P/libgelu-cpu.so" -lm
"$BIN/tessel-compile" "$P/custom.mlir" --optimizer "sgd lr=0.001" --target cuda \
  --gpu-arch "$ARCH" --custom-calls "$P/libgelu-cuda.so" -o "$P/custom"
"$BIN/tessel-opt" "$P/custom.mlir" "--tessel-train-step=optimizer=sgd lr=0.001" -o "$P/custom-step.mlir"
"$BIN/tessel-interp" "$P/custom-step.mlir" --func train_step --train-steps 3 \
  --custom-calls "$P/libgelu-cpu.so" --save "$P/custom.expected.st" > /dev/null
rm -f "$P/libgelu-cuda.so" "$P/libgelu-cpu.so"

rm -f "$P"/*.mlir
du -sh "$P"
