#!/bin/sh
# Install the Debian packages pcgrllm needs to build and test.
# As root, installs what is missing with apt-get; otherwise prints the line to run.
set -e
PKGS="gcc make pkg-config python3 libtcc-dev libjansson-dev libcurl4-openssl-dev libopenblas-dev \
libcairo2-dev libseccomp-dev libcmocka-dev libgsl-dev"
missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "deps: all build dependencies are installed"
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
    echo "deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing
else
    echo "deps: missing packages:$missing"
    echo "deps: run as root:  apt-get update && apt-get install -y$missing"
    exit 1
fi
