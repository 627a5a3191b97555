#!/usr/bin/env bash
# Learning curve of one network preset on the CPU: fitness of the 30 levels
# generated after each budget of steps, against the steps and the wall time
# the training took.  Each point continues the same run (train --resume), so
# the curve is one training, sampled.  The reward is the engine's own for
# the scenario (rewards/engine/scenarioN.c), as in docs/benchmarks.md.
#
#   bench/learning_curve.sh PRESET SEED SCENARIO STEPS... [-- TRAIN FLAGS]
#   bench/learning_curve.sh tiny 1 1 65536 131072 262144 -- --envs 64
#
# Prints one tab-separated row per point: preset, seed, steps, cumulative
# wall seconds of the train commands (start-up and the reward check
# included), and fitness.  PCGRLLM_BIN names the binary (default ./pcgrllm);
# the run directories go under LC_DIR (default a fresh temporary folder).
set -euo pipefail
if [ $# -lt 4 ]; then
    echo "usage: $0 PRESET SEED SCENARIO STEPS... [-- TRAIN FLAGS]" >&2
    exit 2
fi
preset=$1 seed=$2 scenario=$3
shift 3
points=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do points+=("$1"); shift; done
[ $# -gt 0 ] && shift
bin=${PCGRLLM_BIN:-./pcgrllm}
reward=rewards/engine/scenario$scenario.c
[ -r "$reward" ] || { echo "$0: no reward $reward (run from the source tree)" >&2; exit 2; }
dir=${LC_DIR:-$(mktemp -d)}/$preset-s$seed
rm -rf "$dir"
mkdir -p "$dir"
wall=0
first=1
printf 'preset\tseed\tsteps\twall_s\tfitness\n'
for steps in "${points[@]}"; do
    t0=$(date +%s.%N)
    if [ $first = 1 ]; then
        "$bin" train --reward "$reward" --scenario "$scenario" --preset "$preset" --seed "$seed" \
            --steps "$steps" --yes --quiet --out "$dir/run" "$@" >/dev/null
        first=0
    else
        "$bin" train --resume --steps "$steps" --yes --quiet --out "$dir/run" >/dev/null
    fi
    t1=$(date +%s.%N)
    wall=$(awk -v w="$wall" -v a="$t0" -v b="$t1" 'BEGIN { print w + b - a }')
    rm -rf "$dir/levels"
    "$bin" generate --policy "$dir/run" --n 30 --out "$dir/levels" >/dev/null
    fitness=$("$bin" eval --scenario "$scenario" --json "$dir/levels" |
        sed -n 's/^  "fitness": \([0-9.e+-]*\),*$/\1/p')
    printf '%s\t%s\t%s\t%.1f\t%.3f\n' "$preset" "$seed" "$steps" "$wall" "$fitness"
done
