#!/usr/bin/env bash
# The device check, run from the device kit (make devkit) on a GPU machine
# where nothing is built or installed:
#
#   devkit/device_check.sh [OUTDIR]        (OUTDIR: default $OUT, else ./device-check-out)
#
# Stages, each under its own timeout (about 6 minutes in all at most):
#   device    the GPU, driver and runtime (no device: one line, exit 3)
#   tests     the differential tests, CPU against GPU (Philox, env,
#             env + reward, NVRTC against libtcc rewards, sgemm, network,
#             PPO update, resume across backends, generation, the train
#             command); a test that would skip fails instead
#   env       device env steps/s at 600, 4096 and 65536 environments, both
#             observation mappings, without a reward, with a human reward
#             compiled by NVRTC and with the prebuilt sample module
#   train     device sgemm in fp32, TF32 and bf16, and paper-preset trainer
#             steps/s with the projected time of 50M steps, per matmul mode
#   e2e       train --backend cuda (paper preset, 600 envs, E2E_STEPS steps)
#             + generate --backend cuda + eval
# Writes OUTDIR/device_check.log (everything) and OUTDIR/device_check.json
# (per stage: status, seconds, exit code, the output's last lines), after
# every stage, so a killed run still leaves what it did.
# Exit: 0 every stage passed, 1 a stage failed, 3 no CUDA device.
set -uo pipefail
KIT=$(cd "$(dirname "$0")" && pwd)
OUTDIR=${1:-${OUT:-$PWD/device-check-out}}
mkdir -p "$OUTDIR" || exit 1
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/device_check.log
JSON=$OUTDIR/device_check.json
E2E_STEPS=${E2E_STEPS:-500000}
: >"$LOG"
cd "$KIT" || exit 1

log() { printf 'device_check: %s\n' "$*" >>"$LOG"; }
say() { printf 'device_check: %s\n' "$*" | tee -a "$LOG"; }

# ---- libraries: the kit's own, then CUDA's where this machine keeps them
if [ ! -d lib ] && [ -f libs.tar.gz ]; then
    tar -xzf libs.tar.gz || { say "cannot unpack libs.tar.gz"; exit 1; }
fi
cuda_dirs=""
for pat in /usr/local/cuda/lib64 /usr/local/cuda-*/lib64 /usr/lib/x86_64-linux-gnu \
    /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib /usr/local/lib/python3*/dist-packages/nvidia/*/lib \
    /usr/lib/python3*/site-packages/nvidia/*/lib; do
    for d in $pat; do
        if ls "$d"/libcublas.so.* "$d"/libnvrtc.so.* >/dev/null 2>&1; then cuda_dirs="$cuda_dirs:$d"; fi
    done
done
export LD_LIBRARY_PATH="$KIT/lib${cuda_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PCGRLLM_CUDA_LIB="$KIT/libpcgrllm_cuda.so" PCGRLLM_BIN="$KIT/pcgrllm" PCGRLLM_REQUIRE_DEVICE=1
BIN="$KIT/pcgrllm"
TESTS="$KIT/pcgrllm_tests"

# ---- the JSON summary, rewritten after every stage
stages_json=""
json_str() { # $1 as a JSON string (its last 3000 characters; control characters dropped)
    local s=$1
    [ ${#s} -gt 3000 ] && s=${s: -3000}
    s=$(printf '%s' "$s" | tr -d '\000-\010\013-\037')
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\t'/\\t}
    s=${s//$'\n'/\\n}
    printf '"%s"' "$s"
}
write_json() { # $1: overall status
    printf '{"status": "%s", "kit": %s, "device": %s, "stages": [%s]}\n' "$1" "$(json_str "$KIT")" \
        "$(json_str "${DEVICE_INFO:-}")" "${stages_json#,}" >"$JSON"
}
failed=0
stage() { # name timeout command...: run, log, record
    local name=$1 limit=$2
    shift 2
    local t0 out rc status
    log "$name: $* (timeout ${limit} s)"
    t0=$(date +%s)
    out=$(timeout --kill-after=10 "$limit" "$@" 2>&1)
    rc=$?
    printf '%s\n' "$out" >>"$LOG"
    status=passed
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then status=timed-out; elif [ $rc -ne 0 ]; then status=failed; fi
    [ "$status" = passed ] || failed=1
    stages_json="$stages_json,{\"name\": \"$name\", \"status\": \"$status\", \"exit\": $rc, \"seconds\": $(($(date +%s) - t0)), \"output\": $(json_str "$out")}"
    write_json running
    # the device stage speaks only through its caller (one line without a device)
    if [ "$name" = device ]; then log "$name: $status"; else say "$name: $status in $(($(date +%s) - t0)) s"; fi
    LAST_OUT=$out
    return $rc
}

# ---- device
write_json running
if ! stage device 60 "$BIN" device --backend cuda; then
    why=$(printf '%s' "$LAST_OUT" | tail -n 1)
    if printf '%s' "$LAST_OUT" | grep -q "no usable CUDA device\|no CUDA driver\|no CUDA device"; then
        write_json no-device
        echo "device_check: no CUDA device: ${why#pcgrllm: device: }"
        exit 3
    fi
    write_json failed
    say "the device could not be used; see $LOG"
    exit 1
fi
DEVICE_INFO=$LAST_OUT
printf '%s\n' "$DEVICE_INFO"
echo "host: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(nproc) cores"

# ---- the differential tests: CPU against GPU, a skip is a failure
stage tests 200 "$TESTS" 'cuda_*'
stage nvrtc-tests 60 "$TESTS" '*nvrtc*'

# ---- throughput tables
args=(--backend cuda --bench --envs 600,4096,65536 --mapping both --seconds 0.5)
stage env 90 bash -c "'$BIN' device ${args[*]} && '$BIN' device ${args[*]} --reward rewards/human/scenario1.c &&
    '$BIN' device ${args[*]} --reward cuda/reward_sample.fatbin"
printf '%s\n' "$LAST_OUT" | sed -n '/^envs/,$p'
stage train 100 "$BIN" device --backend cuda --sgemm --train --reward rewards/human/scenario1.c --seconds 0.5
printf '%s\n' "$LAST_OUT" | sed -n '/^sgemm/,$p'

# ---- end to end through the command line
e2e=$(mktemp -d /tmp/device_check_e2e.XXXXXX)
stage e2e 110 bash -c "'$BIN' train --backend cuda --reward rewards/human/scenario1.c --scenario 1 --preset paper \
    --envs 600 --steps $E2E_STEPS --quiet --out '$e2e/train' &&
    '$BIN' generate --backend cuda --policy '$e2e/train' --n 30 --out '$e2e/levels' &&
    '$BIN' eval --scenario 1 '$e2e/levels'"
printf '%s\n' "$LAST_OUT" | grep -E '^(trained|fitness)' || true
rm -rf "$e2e"

if [ $failed -ne 0 ]; then
    write_json failed
    say "FAILED: a stage failed; $LOG has everything"
    exit 1
fi
write_json passed
say "passed: every stage; $JSON, $LOG"
exit 0
