#!/usr/bin/env bash
# The device check, run from the device kit (make devkit) on a GPU machine
# where nothing is built or installed, perhaps with only the NVIDIA driver:
#
#   devkit/device_check.sh [OUTDIR]        (OUTDIR: default $OUT, else ./device-check-out)
#
# First it prints glibc's version and every library the check will use
# (the driver, the backend library, cuBLAS, NVRTC: the file, or why there
# is none).  Then the stages, each under its own timeout and all under one
# deadline (DEVICE_CHECK_DEADLINE seconds, default 270, counted from the
# start of this script):
#   device       the GPU, driver, runtime and the sgemm in use (no device:
#                one line, exit 3)
#   tests        the differential tests, CPU against GPU, but those that
#                need NVRTC (Philox, env, env + reward, the human rewards
#                from the kit's prebuilt modules, sgemm with cuBLAS and with
#                the built-in kernel, network, PPO update, resume across
#                backends, generation); a test that would skip fails instead
#   nvrtc-tests  the tests that need NVRTC: NVRTC against libtcc rewards,
#                the confined NVRTC worker, the train command on the device
#   env          device env steps/s at 600, 4096 and 65536 environments,
#                both observation mappings, without a reward, with scenario
#                1's human reward (the kit's prebuilt module) and with the
#                sample module
#   train        device sgemm in fp32, TF32 and bf16, and trainer steps/s
#                with the projected time of 50M steps, per matmul mode
#   e2e          train --backend cuda (paper preset, 600 envs, E2E_STEPS
#                steps; the reward compiled by NVRTC) + generate + eval
# A stage is recorded as passed, failed, timed-out, "skipped: no NVRTC"
# (it needs NVRTC and there is none), "skipped: deadline" (less than 15 s
# of the deadline left), "skipped: no device" or "skipped: device failed".
# Without cuBLAS every sgemm runs the library's built-in kernel and
# nothing is skipped.
#
# PCGRLLM_CUDA_LIB chooses the backend library (default: the kit's);
# PCGRLLM_CUDA_LIB_PATH, when set, is the only place cuBLAS and NVRTC are
# looked for (set empty: they are hidden, as on a machine without them).
# Writes OUTDIR/device_check.log (everything) and OUTDIR/device_check.json
# (glibc, the libraries, and per stage: status, seconds, exit code, the
# output's last lines) after every stage, so a killed run still leaves
# what it did.
# Exit: 0 no stage failed (skips are named in the last line), 1 a stage
# failed or timed out, 3 no CUDA device, 4 the deadline came before the
# device stage.
set -uo pipefail
START=$(date +%s)
DEADLINE=${DEVICE_CHECK_DEADLINE:-270}
# at most 6 digits (11 days), so the arithmetic cannot overflow; base 10,
# so 010 is ten seconds and 08 is not an octal error
case $DEADLINE in '' | *[!0-9]* | ???????*)
    echo "device_check: DEVICE_CHECK_DEADLINE must be a whole number of seconds (at most 999999), got '$DEADLINE'" >&2
    exit 1
    ;;
esac
DEADLINE=$((10#$DEADLINE))
MIN_STAGE=15
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

# ---- libraries: the kit's own (the binaries' RPATH $ORIGIN/lib finds
# them, and their dependencies, without LD_LIBRARY_PATH); CUDA's as
# `pcgrllm device --libraries` finds them
if [ ! -d lib ] && [ -f libs.tar.gz ]; then
    tar -xzf libs.tar.gz || { say "cannot unpack libs.tar.gz"; exit 1; }
fi
export PCGRLLM_CUDA_LIB=${PCGRLLM_CUDA_LIB:-$KIT/libpcgrllm_cuda.so}
export PCGRLLM_BIN="$KIT/pcgrllm" PCGRLLM_REQUIRE_DEVICE=1
BIN="$KIT/pcgrllm"
TESTS="$KIT/pcgrllm_tests"

# glibc from the system, not the binary: a glibc too old for the kit is
# the likeliest reason the binary cannot start
GLIBC=$(getconf GNU_LIBC_VERSION 2>/dev/null || ldd --version 2>/dev/null | head -n 1)
GLIBC=${GLIBC#glibc }
NEEDED=$(cat glibc_needed 2>/dev/null)
say "glibc: ${GLIBC:-unknown}${NEEDED:+ (the kit needs $NEEDED or newer)}"
LIBS=$("$BIN" device --libraries 2>&1 | grep -v '^glibc: ')
[ -n "$LIBS" ] || LIBS="the kit's binary did not start"
printf '%s\n' "$LIBS" | sed 's/^/device_check: /' | tee -a "$LOG"
say "kit: $(ls lib 2>/dev/null | wc -l) libraries in $KIT/lib"
for elf in pcgrllm pcgrllm_tests libpcgrllm_cuda.so; do
    log "ldd $elf:"
    ldd "$elf" >>"$LOG" 2>&1
done
# the stages use exactly the libraries printed, or none
CUBLAS=$(printf '%s\n' "$LIBS" | sed -n 's|^cuBLAS: \(/.*\)$|\1|p')
NVRTC=$(printf '%s\n' "$LIBS" | sed -n 's|^NVRTC: \(/.*\) ([^)]*)$|\1|p')
export PCGRLLM_CUBLAS=${CUBLAS:-off} PCGRLLM_NVRTC=${NVRTC:-off}

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
    printf '{"status": "%s", "kit": %s, "deadline_s": %d, "glibc": %s, "libraries": %s, "device": %s, "stages": [%s]}\n' \
        "$1" "$(json_str "$KIT")" "$DEADLINE" "$(json_str "$GLIBC")" "$(json_str "$LIBS")" \
        "$(json_str "${DEVICE_INFO:-}")" "${stages_json#,}" >"$JSON"
}
failed=""
passed=""
skipped=""
halt="" # once set (no device, or the deadline before the device), every later stage is skipped for it
record() { # name status exit seconds output
    stages_json="$stages_json,{\"name\": \"$1\", \"status\": \"$2\", \"exit\": $3, \"seconds\": $4, \"output\": $(json_str "$5")}"
    write_json running
}
skip() { # name reason
    record "$1" "skipped: $2" null 0 ""
    skipped="$skipped, $1 ($2)"
    if [ -n "$halt" ]; then log "$1: skipped: $2"; else say "$1: skipped: $2"; fi
}
seconds_left() { echo $((START + DEADLINE - $(date +%s))); }
stage() { # name timeout command...: run under what is left of the deadline, log, record; 2 if skipped
    local name=$1 limit=$2
    shift 2
    local t0 out rc status left
    LAST_OUT=""
    if [ -n "$halt" ]; then skip "$name" "$halt"; return 2; fi
    left=$(seconds_left)
    if [ "$left" -lt $MIN_STAGE ]; then skip "$name" deadline; return 2; fi
    # the kill grace of timeout stays inside the deadline too
    [ "$limit" -gt $((left - 10)) ] && limit=$((left - 10))
    log "$name: $* (timeout ${limit} s)"
    t0=$(date +%s)
    out=$(timeout --kill-after=10 "$limit" "$@" 2>&1)
    rc=$?
    printf '%s\n' "$out" >>"$LOG"
    status=passed
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then status=timed-out; elif [ $rc -ne 0 ]; then status=failed; fi
    if [ $status = passed ]; then passed="$passed, $name"; else failed="$failed, $name"; fi
    record "$name" "$status" "$rc" "$(($(date +%s) - t0))" "$out"
    # the device stage speaks only through its caller (one line without a device)
    if [ "$name" = device ]; then log "$name: $status"; else say "$name: $status in $(($(date +%s) - t0)) s"; fi
    LAST_OUT=$out
    return $rc
}
nvrtc_stage() { # like stage, for a stage that cannot run without NVRTC
    if [ -z "$NVRTC" ]; then skip "$1" "no NVRTC"; return 2; fi
    stage "$@"
}

# ---- device
write_json running
stage device 60 "$BIN" device --backend cuda
rc=$?
no_device=""
if [ $rc -eq 2 ]; then
    halt=deadline
elif [ $rc -ne 0 ]; then
    if printf '%s' "$LAST_OUT" | grep -q "no usable CUDA device\|no CUDA driver\|no CUDA device"; then
        no_device=$(printf '%s' "$LAST_OUT" | tail -n 1)
        halt="no device"
    else
        say "the device could not be used; see $LOG"
        halt="device failed"
    fi
else
    DEVICE_INFO=$LAST_OUT
    printf '%s\n' "$DEVICE_INFO"
    echo "host: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(nproc) cores"
fi

# ---- the differential tests: CPU against GPU, a skip is a failure; each
# test runs once (the NVRTC ones only in their own stage)
stage tests 200 "$TESTS" 'cuda_*' '*nvrtc*'
nvrtc_stage nvrtc-tests 60 "$TESTS" '*nvrtc*'

# ---- throughput tables, the rewards from the kit's prebuilt modules
args=(--backend cuda --bench --envs 600,4096,65536 --mapping both --seconds 0.5)
stage env 90 bash -c "'$BIN' device ${args[*]} && '$BIN' device ${args[*]} --reward cuda/human/scenario1.fatbin &&
    '$BIN' device ${args[*]} --reward cuda/reward_sample.fatbin" &&
    printf '%s\n' "$LAST_OUT" | sed -n '/^envs/,$p'
stage train 100 "$BIN" device --backend cuda --sgemm --train --reward cuda/human/scenario1.fatbin --seconds 0.5 &&
    printf '%s\n' "$LAST_OUT" | sed -n '/^sgemm/,$p'

# ---- end to end through the command line (train compiles its reward
# kernel with NVRTC)
e2e=$(mktemp -d /tmp/device_check_e2e.XXXXXX)
nvrtc_stage e2e 110 bash -c "'$BIN' train --backend cuda --reward rewards/human/scenario1.c --scenario 1 --preset paper \
    --envs 600 --steps $E2E_STEPS --quiet --out '$e2e/train' &&
    '$BIN' generate --backend cuda --policy '$e2e/train' --n 30 --out '$e2e/levels' &&
    '$BIN' eval --scenario 1 '$e2e/levels'" &&
    printf '%s\n' "$LAST_OUT" | grep -E '^(trained|fitness)'
rm -rf "$e2e"

# ---- the summary
log "passed: ${passed#, }"
log "failed: ${failed#, }"
log "skipped: ${skipped#, }"
if [ -n "$no_device" ]; then
    write_json no-device
    echo "device_check: no CUDA device: ${no_device#pcgrllm: device: }"
    exit 3
fi
if [ "$halt" = deadline ]; then
    write_json deadline
    say "deadline: $DEADLINE s were not enough to reach the device stage; $JSON, $LOG"
    exit 4
fi
if [ -n "$failed" ]; then
    write_json failed
    say "FAILED: ${failed#, }${skipped:+; skipped: ${skipped#, }}; $LOG has everything"
    exit 1
fi
write_json passed
say "passed: ${passed#, }${skipped:+; skipped: ${skipped#, }}; $JSON, $LOG"
exit 0
