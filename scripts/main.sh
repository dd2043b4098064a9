#!/usr/bin/env bash
# The main job: install what is missing, build, then
#  1. verify and print the annotated example model (examples/mlp.mlir) and
#     its single-device form;
#  2. generate a small GPT, shard it for a dp=2 x tp=2 mesh by the built-in
#     dp-tp rules, propagate the shardings (with their explanation summary),
#     and run it in the reference interpreter: its loss at initialization is
#     close to ln(vocab);
#  3. partition it into the per-device program, print its communication,
#     run it on 4 ranks and check it computes the single-device loss;
#  4. differentiate it (--tessel-grad), partition the backward pass too and
#     check the loss and every parameter gradient on 4 ranks;
#  5. build its AdamW training step, partition it and run 10 steps on 4
#     ranks against 10 steps on one device.
# Later stages (pipelines, native code) extend this job.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
tessel_install_packages
tessel_build

BIN=$BUILD_DIR/bin
MODEL=${1:-$TESSEL_ROOT/examples/mlp.mlir}
echo "== $MODEL, verified and printed by tessel-opt"
"$BIN/tessel-opt" "$MODEL"
echo
echo "== the same model with its shardings stripped (the single-device program)"
"$BIN/tessel-opt" --tessel-strip-shardings "$MODEL"

WORK=$BUILD_DIR/main-job
mkdir -p "$WORK"
echo
echo "== a 2-layer GPT (hidden 128, vocab 256) sharded for dp=2 x tp=2 (rules dp-tp)"
"$BIN/tessel-models" gpt --layers 2 --hidden 128 --heads 4 --vocab 256 --seq 64 \
  --batch 4 --mesh "dp=2,tp=2" --strategy dp-tp -o "$WORK/gpt.mlir"
"$BIN/tessel-opt" --tessel-propagate=explain=true "$WORK/gpt.mlir" \
  -o "$WORK/gpt.propagated.mlir" 2> "$WORK/gpt.explain.txt"
echo "propagated: $(grep -o 'tessel.sharding = ' "$WORK/gpt.propagated.mlir" | wc -l) shardings;" \
  "$(grep -c '^    partial:' "$WORK/gpt.explain.txt") ops leave partial sums" \
  "(details: $WORK/gpt.explain.txt)"
echo "== its loss at initialization in the reference interpreter (ln 256 = 5.545)"
"$BIN/tessel-interp" "$WORK/gpt.propagated.mlir" --seed 0 --print \
  --save "$WORK/gpt.reference.safetensors"
echo
echo "== partitioned for 4 devices (Megatron tensor parallelism x data parallelism)"
"$BIN/tessel-opt" "$WORK/gpt.propagated.mlir" --tessel-partition \
  --tessel-optimize-collectives --tessel-comm-report -o "$WORK/gpt.partitioned.mlir"
echo "== the partitioned program on 4 ranks against the single-device loss"
"$BIN/tessel-interp" "$WORK/gpt.partitioned.mlir" --seed 0 \
  --expect "$WORK/gpt.reference.safetensors" --rtol 1e-6 --atol 1e-7
echo
echo "== the backward pass: differentiate (--tessel-grad), propagate, partition;"
echo "== loss and every parameter gradient on 4 ranks against the single device"
"$BIN/tessel-opt" "$WORK/gpt.mlir" --tessel-grad=func=forward --tessel-propagate \
  -o "$WORK/gpt.grad.mlir"
"$BIN/tessel-interp" "$WORK/gpt.grad.mlir" --func forward_grad --seed 0 \
  --save "$WORK/gpt.grad.reference.safetensors" > /dev/null
"$BIN/tessel-opt" "$WORK/gpt.grad.mlir" --tessel-partition --tessel-optimize-collectives \
  -o "$WORK/gpt.grad.partitioned.mlir"
"$BIN/tessel-interp" "$WORK/gpt.grad.partitioned.mlir" --func forward_grad --seed 0 \
  --expect "$WORK/gpt.grad.reference.safetensors" --rtol 1e-5 --atol 1e-7 \
  > "$WORK/gpt.grad.compare.txt"
echo "$(grep -c '^match' "$WORK/gpt.grad.compare.txt") outputs match (loss + gradients);" \
  "largest abs error $(grep -o 'max abs err [^,]*' "$WORK/gpt.grad.compare.txt" |
    awk '{print $4}' | sort -g | tail -n 1) (details: $WORK/gpt.grad.compare.txt)"
echo
echo "== the training step (AdamW, warm-up + cosine, clipping): 10 steps on 4 ranks"
echo "== against 10 steps on one device"
"$BIN/tessel-opt" "$WORK/gpt.mlir" --tessel-train-step="optimizer=adamw lr=3e-3 epsilon=1e-3 warmup=2 total-steps=10 clip-norm=1.0 weight-decay=0.01" \
  --tessel-propagate -o "$WORK/gpt.step.mlir"
"$BIN/tessel-interp" "$WORK/gpt.step.mlir" --func train_step --seed 0 --train-steps 10 \
  --save "$WORK/gpt.step.reference.safetensors" | sed -n '1p;$p'
"$BIN/tessel-opt" "$WORK/gpt.step.mlir" --tessel-partition --tessel-optimize-collectives \
  -o "$WORK/gpt.step.partitioned.mlir"
"$BIN/tessel-interp" "$WORK/gpt.step.partitioned.mlir" --func train_step --seed 0 --train-steps 10 \
  --expect "$WORK/gpt.step.reference.safetensors" --rtol 1e-4 --atol 1e-6 \
  > "$WORK/gpt.step.compare.txt"
echo "4 ranks: $(grep '^step 9' "$WORK/gpt.step.compare.txt");" \
  "$(grep -c '^match' "$WORK/gpt.step.compare.txt") outputs match after 10 steps" \
  "(parameters, AdamW state, loss, norm)"
