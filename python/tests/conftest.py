"""Where the tests find the engine: the pcgrllm binary of the source tree
(PCGRLLM_BIN, else ./pcgrllm beside build/) for the cross-checks."""
import os
import shutil

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="session")
def pcgrllm_bin():
    path = os.environ.get("PCGRLLM_BIN") or os.path.join(ROOT, "pcgrllm")
    if not os.path.exists(path):
        path = shutil.which("pcgrllm") or path
    if not os.path.exists(path):
        pytest.fail("the pcgrllm binary is needed for the cross-checks: run make, or set PCGRLLM_BIN")
    return os.path.abspath(path)
