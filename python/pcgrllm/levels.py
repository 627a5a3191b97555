"""Level files, PNGs and the evaluator over NumPy maps (uint8 (h, w),
tile ids 1..9 as docs/method.md lists them)."""
import ctypes
import json
import os

import numpy as np

from ._lib import PcgError, errbuf, lib, raise_from

_U8P = ctypes.POINTER(ctypes.c_uint8)


def _map(level, what="level"):
    a = np.asarray(level)
    if a.ndim != 2:
        raise ValueError("%s must be a 2-D array of tile ids, not %d-D" % (what, a.ndim))
    if a.dtype.kind not in "iu":
        raise TypeError("%s must hold integer tile ids, not %s" % (what, a.dtype))
    if a.size and (a.min() < 0 or a.max() > 255):
        raise ValueError("%s holds %d, which is not a tile id 1..9" % (what, a.min() if a.min() < 0 else a.max()))
    return np.ascontiguousarray(a, dtype=np.uint8)


def _tiles_out(call, *args):
    tiles = np.empty(lib().pcg_max_side() ** 2, dtype=np.uint8)
    h, w, err = ctypes.c_int32(), ctypes.c_int32(), errbuf()
    if call(*args, tiles.ctypes.data_as(_U8P), ctypes.byref(h), ctypes.byref(w), err, len(err)):
        raise_from(err)
    return tiles[: h.value * w.value].reshape(h.value, w.value).copy()


def read_level(path):
    """A level file as a uint8 (h, w) array."""
    return _tiles_out(lib().pcg_level_read, os.fsencode(path))


def parse_level(text):
    """Level text (the file format) as a uint8 (h, w) array."""
    data = text.encode() if isinstance(text, str) else bytes(text)
    return _tiles_out(lib().pcg_level_parse, data, len(data))


def write_level(path, level, comment=None):
    """Write a level file atomically; comment becomes a '#' line."""
    a = _map(level)
    err = errbuf()
    c = None if comment is None else str(comment).encode()
    if lib().pcg_level_write(os.fsencode(path), a.shape[0], a.shape[1], a.ctypes.data_as(_U8P), c, err, len(err)):
        raise_from(err)


def render_png(path, level, cell_px=32):
    """The level as a PNG with labelled tiles and a legend."""
    a = _map(level)
    err = errbuf()
    if lib().pcg_render_png(os.fsencode(path), a.shape[0], a.shape[1], a.ctypes.data_as(_U8P), int(cell_px), err,
                            len(err)):
        raise_from(err)


def _target_text(target):
    if isinstance(target, bool):
        raise TypeError("target must be a scenario number, a dict or a JSON string")
    if isinstance(target, (int, np.integer)):
        return str(int(target))
    if isinstance(target, dict):
        return json.dumps(target)
    if isinstance(target, str):
        return target
    raise TypeError("target must be a scenario number, a dict or a JSON string, not %s" % type(target).__name__)


def evaluate(levels, target, names=None):
    """Score levels against target: a scenario number 1..4, or a target as
    `pcgrllm eval --target` takes it (a dict or its JSON text).  levels: a
    (n, h, w) array or a sequence of (h, w) arrays.  Returns the document
    `pcgrllm eval --json` prints: "fitness", "levels" (per-level metrics,
    "file" naming each by names[i] or its index), the set's summary and
    the target."""
    if isinstance(levels, np.ndarray) and levels.ndim == 3:
        maps = [levels[i] for i in range(levels.shape[0])]
    else:
        maps = list(levels)
    if not maps:
        raise ValueError("no levels to evaluate")
    arrays = [_map(m, "level %d" % i) for i, m in enumerate(maps)]
    n = len(arrays)
    hs = (ctypes.c_int32 * n)(*[a.shape[0] for a in arrays])
    ws = (ctypes.c_int32 * n)(*[a.shape[1] for a in arrays])
    offsets, total = (ctypes.c_long * n)(), 0
    for i, a in enumerate(arrays):
        offsets[i], total = total, total + a.size
    tiles = np.concatenate([a.ravel() for a in arrays]) if total else np.zeros(1, np.uint8)
    cnames = None
    if names is not None:
        if len(names) != n:
            raise ValueError("names has %d entries for %d levels" % (len(names), n))
        cnames = (ctypes.c_char_p * n)(*[str(x).encode() for x in names])
    err = errbuf()
    text = lib().pcg_eval(_target_text(target).encode(), n, hs, ws, tiles.ctypes.data_as(_U8P), offsets, cnames,
                          err, len(err))
    if not text:
        raise_from(err)
    try:
        return json.loads(ctypes.string_at(text).decode())
    finally:
        lib().pcg_free(text)
