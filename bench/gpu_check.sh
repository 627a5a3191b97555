#!/usr/bin/env bash
# GPU check: build everything (CPU binary and CUDA backend), run the CUDA
# tests (differential against the CPU backend), then print one table of
# device environment steps/s with random actions and the compact observation
# written every step, at 600, 4096 and 65536 environments, for both
# observation thread mappings, without a reward, with a human reward and with
# the prebuilt sample reward module; then the sgemm rate (fp32, TF32, bf16),
# the device trainer's steps/s with the projected time of 50M steps, one
# `train --backend cuda` + `generate` + `eval` through the command line, and
# the learning comparison of the matmul modes.
# Sized for a few minutes on one GPU; on a machine without a device it
# builds, runs the tests (which skip) and says "no CUDA device".
#
#   bench/gpu_check.sh            (BUILD=dir and BIN=path as for make)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
BIN=${BIN:-pcgrllm}
# the same paths, runnable
case "$BIN" in /*) BINX=$BIN ;; *) BINX=./$BIN ;; esac
case "$BUILD" in /*) TESTX=$BUILD/pcgrllm_tests ;; *) TESTX=./$BUILD/pcgrllm_tests ;; esac
JOBS=$(nproc 2>/dev/null || echo 2)
log=$(mktemp /tmp/gpu_check.XXXXXX)
trap 'rm -f "$log"' EXIT

step() { printf 'gpu_check: %s\n' "$*"; }

step "building (make, make cuda)"
if ! make -s BUILD="$BUILD" BIN="$BIN" -j"$JOBS" >"$log" 2>&1; then
    cat "$log"; step "FAILED: make"; exit 1
fi
if ! make -s BUILD="$BUILD" BIN="$BIN" -j"$JOBS" cuda "$BUILD/pcgrllm_tests" >"$log" 2>&1; then
    cat "$log"; step "FAILED: make cuda"; exit 1
fi
grep -q "nvcc not found" "$log" && step "nvcc not found: the CUDA backend was not built"

step "CUDA tests (cuda_*)"
if ! PCGRLLM_BIN="$BINX" "$TESTX" 'cuda_*' >"$log" 2>&1; then
    cat "$log"; step "FAILED: CUDA tests"; exit 1
fi
grep -E "skipped|PASSED|SKIPPED  \] [0-9]" "$log" | sed 's/^/  /'

if ! info=$("$BINX" device --backend cuda 2>&1); then
    step "no CUDA device: ${info#pcgrllm: device: }"
    step "built and tested what runs without a device; nothing measured"
    exit 0
fi

echo
echo "$info" | sed -n 's/^device: /GPU: /p; s/^driver: /    /p'
echo "host: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(nproc) cores"
echo "environment: 16x16 dungeon, random actions (cuRAND Philox), compact observation every step"
args=(--backend cuda --bench --envs "600,4096,65536" --mapping both --seconds 1)
"$BINX" device "${args[@]}" | sed -n '/^envs/,$p'
# a human reward compiled by NVRTC for this GPU, and the prebuilt sample module
for reward in rewards/human/scenario1.c "$BUILD/cuda/reward_sample.fatbin"; do
    if [ -f "$reward" ]; then
        "$BINX" device "${args[@]}" --reward "$reward" | sed -n '/^envs/,$p' | tail -n +2
    else
        step "$reward missing: its rows are left out"
    fi
done
# the matmul rate, then the device trainer (both presets, 600 and 4096
# envs, each matmul mode, with the human reward) against it
"$BINX" device --backend cuda --train --reward rewards/human/scenario1.c --seconds 1 | sed -n '/^sgemm/,$p'

# the command line end to end: train the paper preset on the device with
# scenario 1's human reward, generate on the device, score (E2E_STEPS=0
# skips it)
E2E_STEPS=${E2E_STEPS:-2000000}
if [ "$E2E_STEPS" -gt 0 ]; then
    e2e=$(mktemp -d /tmp/gpu_check_e2e.XXXXXX)
    t0=$(date +%s)
    if "$BINX" train --backend cuda --reward rewards/human/scenario1.c --scenario 1 --preset paper --envs 600 \
        --steps "$E2E_STEPS" --quiet --out "$e2e/train" >"$log" 2>&1 &&
        "$BINX" generate --backend cuda --policy "$e2e/train" --n 30 --out "$e2e/levels" >>"$log" 2>&1; then
        t1=$(date +%s)
        fit=$("$BINX" eval --scenario 1 "$e2e/levels" | sed -n 's/^fitness \([0-9.]*\).*/\1/p')
        echo
        printf 'train --backend cuda, paper preset, 600 envs, %s steps + generate: %d s, fitness %s\n' \
            "$E2E_STEPS" "$((t1 - t0))" "$fit"
    else
        cat "$log"; step "FAILED: train/generate --backend cuda"
    fi
    rm -rf "$e2e"
fi

# learning with fp32, TF32 and bf16 matmuls: the same seeds, the fitness of
# the generated levels per mode (LEARN_STEPS=0 skips it)
LEARN_STEPS=${LEARN_STEPS:-1000000}
if [ "$LEARN_STEPS" -gt 0 ]; then
    "$BINX" device --backend cuda --compare-math 1 --steps "$LEARN_STEPS" --seeds 2 | sed -n '/^learning/,$p'
fi
