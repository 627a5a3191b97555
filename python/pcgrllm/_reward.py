"""Reward files: checked by `pcgrllm check-reward`, then run only in the
binary's confined worker (reward_jit/batch_reward.h), never here."""
import os
import subprocess
import warnings

from ._lib import PcgError, binary


def checked_source(path, variant):
    """The bytes of the reward file at path once `pcgrllm check-reward`
    accepts them; PcgError with the line it prints when it refuses them.
    The bytes checked are the bytes run: they are read once, here, and
    handed to the check through a memory file."""
    exe = binary()
    try:
        with open(path, "rb") as f:
            src = f.read(65537)
    except OSError as e:
        raise PcgError("%s: cannot read the reward file: %s" % (path, e.strerror)) from None
    fd = os.memfd_create("reward.c")
    try:
        os.write(fd, src)
        alias = "/proc/self/fd/%d" % fd
        try:
            done = subprocess.run([exe, "check-reward", "--variant", variant, alias], pass_fds=(fd,),
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
        except subprocess.TimeoutExpired:
            raise PcgError("%s: pcgrllm check-reward did not finish within 600 s" % path) from None
    finally:
        os.close(fd)
    lines = done.stderr.decode("utf-8", "replace").replace(alias, path).splitlines()
    if done.returncode != 0:
        said = [ln for ln in lines if ln.startswith(("error: ", "pcgrllm: "))]
        raise PcgError(said[-1] if said else "%s: pcgrllm check-reward refused it (exit status %d)"
                       % (path, done.returncode))
    for ln in lines:
        if ln.startswith("warning: "):
            warnings.warn("%s: %s" % (path, ln[len("warning: "):]), stacklevel=4)
    return src, exe
