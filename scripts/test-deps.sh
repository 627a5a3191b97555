#!/bin/sh
# Install the Debian packages that some tests need beyond the build: a
# one-node Slurm cluster for the grid's batch-array test (slurmctld, slurmd,
# slurm-client, munge) and headless Chromium for the pages' screenshot test.
# Without them those tests skip with one line.  As root, installs what is
# missing with apt-get; otherwise prints the line to run.  tensorboardX
# (PyPI) for the TensorBoard converter's test (scripts/pcgrllm-tb), numpy
# and pytest for the Python package's tests, with pip.
set -e
if ! python3 -c 'import tensorboardX' 2>/dev/null; then
    echo "test-deps: installing tensorboardX (pip)"
    python3 -m pip install --quiet --disable-pip-version-check tensorboardX || echo "test-deps: pip could not install tensorboardX; its test will skip"
fi
# numpy and pytest (PyPI) for the Python package's tests (python/tests)
for mod in numpy pytest; do
    if ! python3 -c "import $mod" 2>/dev/null; then
        echo "test-deps: installing $mod (pip)"
        python3 -m pip install --quiet --disable-pip-version-check "$mod" || echo "test-deps: pip could not install $mod; make test-python needs it"
    fi
done
PKGS="slurmctld slurmd slurm-client munge chromium python3"
missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "test-deps: all test dependencies are installed"
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
    echo "test-deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # the packages' own services are not started here (the tests start
    # their own daemons); in a container without an init nothing starts anyway
    apt-get install -y -qq --no-install-recommends $missing
else
    echo "test-deps: missing packages:$missing"
    echo "test-deps: run as root:  apt-get update && apt-get install -y$missing"
    exit 1
fi
