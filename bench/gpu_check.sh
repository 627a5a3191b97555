#!/usr/bin/env bash
# GPU check: build everything (CPU binary and CUDA backend), run the CUDA
# tests (differential against the CPU backend), then print one table of
# device environment steps/s with random actions and the compact observation
# written every step, at 600, 4096 and 65536 environments, for both
# observation thread mappings, without a reward, with a human reward and with
# the prebuilt sample reward module; then the sgemm rate (fp32, TF32) and
# the device trainer's steps/s with the projected time of 50M steps.
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
# envs, fp32 and TF32, with the human reward) against it
"$BINX" device --backend cuda --train --reward rewards/human/scenario1.c --seconds 1 | sed -n '/^sgemm/,$p'
