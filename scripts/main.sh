#!/usr/bin/env bash
# The main job: install what is missing, build, then train a small GPT on
# real text as 4 ranks:
#  1. tokenize the demo text (Genesis and Exodus, King James Version; one
#     token per byte) into nanoGPT-style token files;
#  2. generate a 4-layer GPT (hidden 128, vocabulary 256, sequence 64, batch
#     16) in the tessel dialect;
#  3. compile it with tessel-compile for a dp=2 x tp=2 mesh (Megatron tensor
#     parallelism x data parallelism): AdamW training step, sharding
#     propagation, SPMD partitioning, lowering to native code with OpenBLAS;
#  4. train it with tessel-run as 4 ranks (threads) for 1000 steps on the
#     text, checkpointing every 250 steps, and check the loss fell;
#  5. show what it learned: tessel-generate continues a prompt from the
#     last checkpoint (two samples).
# Set TESSEL_MAIN_STEPS to train for another number of steps, and
# TESSEL_MAIN_MPI=1 to run the ranks as MPI processes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
tessel_install_packages
tessel_build

BIN=$BUILD_DIR/bin
WORK=$BUILD_DIR/main-job
STEPS=${TESSEL_MAIN_STEPS:-1000}
mkdir -p "$WORK"

echo "== 1. the demo text, one token per byte (data/kjv/README.md)"
"$BIN/tessel-tokenize" "$TESSEL_ROOT/data/kjv/genesis-exodus.txt" \
  -o "$WORK/kjv.train.bin" --val "$WORK/kjv.val.bin" --val-fraction 0.1

echo
echo "== 2. a 4-layer GPT in the tessel dialect"
"$BIN/tessel-models" gpt --layers 4 --hidden 128 --heads 4 --vocab 256 \
  --seq 64 --batch 16 -o "$WORK/gpt.mlir"
echo "$WORK/gpt.mlir: $(grep -c 'tessel\.' "$WORK/gpt.mlir") lines of tessel ops"

echo
echo "== 3. compiled for dp=2 x tp=2: train step -> propagate -> partition ->"
echo "==    optimize collectives -> linalg -> LLVM -> executable"
"$BIN/tessel-compile" "$WORK/gpt.mlir" --mesh "dp=2,tp=2" --strategy dp-tp \
  --optimizer "adamw lr=3e-3 warmup=30 total-steps=$STEPS clip-norm=1.0 weight-decay=0.1" \
  -O2 --timing -o "$WORK/gpt" 2> "$WORK/compile-timing.txt"
echo "$WORK/gpt: compiled in $(awk '/Total$/ {print $1; exit}' "$WORK/compile-timing.txt") s" \
  "(pass times: $WORK/compile-timing.txt)"

echo
echo "== 4. trained as 4 ranks on $(basename "$WORK/kjv.train.bin"), $STEPS steps"
RUN=("$BIN/tessel-run" -n 4)
if [[ "${TESSEL_MAIN_MPI:-0}" == 1 ]]; then RUN+=(--mpi); fi
rm -rf "$WORK/ckpt"
"${RUN[@]}" "$WORK/gpt" --steps "$STEPS" --data "$WORK/kjv.train.bin" \
  --print-every 50 --ckpt "$WORK/ckpt" --save-every 250 | tee "$WORK/train.txt"

# The loss must have fallen clearly: the mean of the last 3 reports against
# the first.
awk '/^step [0-9]+: loss/ { sub(",", "", $4); loss[n++] = $4 }
     END {
       if (n < 4) { print "too few steps to judge the loss"; exit 1 }
       last = (loss[n-1] + loss[n-2] + loss[n-3]) / 3
       printf "loss %.3f at the first report, %.3f over the last three (ln 256 = 5.545)\n", loss[0], last
       if (last > 0.75 * loss[0]) { print "error: the loss did not fall"; exit 1 }
     }' "$WORK/train.txt"
echo "checkpoints (safetensors, Hugging Face names, global shapes): $WORK/ckpt"

echo
echo "== 5. what it learned: two samples continuing a prompt (tessel-generate,"
echo "==    the last checkpoint, temperature 0.8, top-k 40)"
# The same model with a batch of 2 (the parameters do not depend on the
# batch): each row is one sample.
"$BIN/tessel-models" gpt --layers 4 --hidden 128 --heads 4 --vocab 256 \
  --seq 64 --batch 2 -o "$WORK/gpt-sample.mlir"
"$BIN/tessel-generate" "$WORK/gpt-sample.mlir" --weights "$WORK/ckpt" \
  --prompt "And God said" --tokens 150 --samples 2 --seed 1
