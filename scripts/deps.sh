#!/bin/sh
# Install what pcgrllm needs to build and test.
# Debian packages: as root, installs what is missing with apt-get; otherwise
# prints the line to run.  Python packages the tests read outputs with
# (tests/mc_check.py reads the Minecraft export with the NBT package from
# PyPI): installed with pip when missing; if that fails the test that needs
# it skips with one line saying so.
set -e
PKGS="gcc g++ make pkg-config python3 libtcc-dev libjansson-dev libcurl4-openssl-dev libopenblas-dev \
libcairo2-dev libseccomp-dev libcmocka-dev zlib1g-dev libgsl-dev"
PY_PKGS="NBT==1.5.1"

python_deps() {
    if python3 -c 'import nbt' 2>/dev/null; then
        echo "deps: Python test packages are installed"
        return 0
    fi
    echo "deps: installing Python test packages: $PY_PKGS"
    if [ "$(id -u)" -eq 0 ]; then
        python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore $PY_PKGS 2>/dev/null ||
            python3 -m pip install --quiet --disable-pip-version-check --break-system-packages $PY_PKGS || true
    else
        python3 -m pip install --quiet --disable-pip-version-check --user $PY_PKGS || true
    fi
    python3 -c 'import nbt' 2>/dev/null ||
        echo "deps: could not install $PY_PKGS; the Minecraft read-back test (export_cli_roundtrip) will skip"
}

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "deps: all build dependencies are installed"
elif [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing
else
    echo "deps: missing packages:$missing"
    echo "deps: run as root:  apt-get update && apt-get install -y$missing"
    exit 1
fi
python_deps
