"""Loading libpcgrllm.so and declaring its C ABI (host/api/pcg_api.h)."""
import ctypes
import os

API_VERSION = 2
_ERR_LEN = 1024


class PcgError(Exception):
    """An error the engine reported, with its one-line message."""


def _candidates():
    env = os.environ.get("PCGRLLM_LIB")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    found = [os.path.join(here, "libpcgrllm.so")]
    # an editable install or PYTHONPATH=python: the source tree's build/
    found.append(os.path.join(here, "..", "..", "build", "libpcgrllm.so"))
    found.append(os.path.join(os.getcwd(), "build", "libpcgrllm.so"))
    return found


def _load():
    tried = _candidates()
    for path in tried:
        if os.path.exists(path):
            try:
                lib = ctypes.CDLL(os.path.abspath(path))
                lib.pcg_api_version.restype = ctypes.c_int
            except (OSError, AttributeError) as e:
                raise PcgError("%s is not a pcgrllm library (%s); run `make lib` or set PCGRLLM_LIB"
                               % (path, str(e).splitlines()[0])) from None
            global _LIB_PATH
            _LIB_PATH = os.path.abspath(path)
            break
    else:
        raise PcgError("libpcgrllm.so not found (looked at %s); run `make lib` or set PCGRLLM_LIB"
                       % ", ".join(tried))
    if lib.pcg_api_version() != API_VERSION:
        raise PcgError("%s speaks C ABI %d, this package %d; rebuild one of them"
                       % (path, lib.pcg_api_version(), API_VERSION))
    _declare(lib)
    return lib


def _declare(lib):
    c = ctypes
    u8p, i32p, f32p, dp = (c.POINTER(c.c_uint8), c.POINTER(c.c_int32), c.POINTER(c.c_float),
                          c.POINTER(c.c_double))
    sigs = {
        "pcg_vec_new": (c.c_void_p, [c.c_int, c.c_int, c.c_char_p, c.c_uint64, c.c_char_p, c.c_int]),
        "pcg_vec_free": (None, [c.c_void_p]),
        "pcg_vec_shape": (None, [c.c_void_p, i32p]),
        "pcg_vec_obs": (u8p, [c.c_void_p]),
        "pcg_vec_maps": (u8p, [c.c_void_p]),
        "pcg_vec_final_maps": (u8p, [c.c_void_p]),
        "pcg_vec_rewards": (f32p, [c.c_void_p]),
        "pcg_vec_dones": (u8p, [c.c_void_p]),
        "pcg_vec_steps": (i32p, [c.c_void_p]),
        "pcg_vec_reset": (c.c_int, [c.c_void_p, c.c_int, c.c_uint64, c.c_char_p, c.c_int]),
        "pcg_vec_step": (c.c_int, [c.c_void_p, i32p, c.c_char_p, c.c_int]),
        "pcg_vec_random_actions": (None, [c.c_void_p, c.c_uint64, c.c_uint64, i32p]),
        "pcg_vec_log": (None, [c.c_void_p, dp, c.c_int]),
        "pcg_vec_set_human_reward": (c.c_int, [c.c_void_p, c.c_int, c.c_char_p, c.c_int]),
        "pcg_vec_bench": (c.c_double, [c.c_void_p, c.c_double]),
        "pcg_vec_set_reward_file": (c.c_int, [c.c_void_p, c.c_char_p, c.c_char_p, c.c_double, c.c_char_p, c.c_int]),
        "pcg_eval": (c.c_void_p, [c.c_char_p, c.c_int, i32p, i32p, u8p, c.POINTER(c.c_long),
                                  c.POINTER(c.c_char_p), c.c_char_p, c.c_int]),
        "pcg_free": (None, [c.c_void_p]),
        "pcg_level_read": (c.c_int, [c.c_char_p, u8p, i32p, i32p, c.c_char_p, c.c_int]),
        "pcg_level_parse": (c.c_int, [c.c_char_p, c.c_long, u8p, i32p, i32p, c.c_char_p, c.c_int]),
        "pcg_level_write": (c.c_int, [c.c_char_p, c.c_int, c.c_int, u8p, c.c_char_p, c.c_char_p, c.c_int]),
        "pcg_render_png": (c.c_int, [c.c_char_p, c.c_int, c.c_int, u8p, c.c_int, c.c_char_p, c.c_int]),
        "pcg_max_side": (c.c_int, []),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


_LIB = None
_LIB_PATH = None


def lib():
    """The library, loaded on first use."""
    global _LIB
    if _LIB is None:
        _LIB = _load()
    return _LIB


def errbuf():
    return ctypes.create_string_buffer(_ERR_LEN)


def raise_from(buf):
    """A PcgError carrying the engine's line in buf."""
    raise PcgError(buf.value.decode("utf-8", "replace") or "the engine reported an error")


def binary():
    """The pcgrllm binary, whose confined workers run reward files:
    $PCGRLLM_BIN if set; else beside the library (or beside its build/
    folder); else the source tree's.  PcgError when there is none."""
    env = os.environ.get("PCGRLLM_BIN")
    if env:
        tried = [env]
    else:
        lib()
        here = os.path.dirname(os.path.abspath(__file__))
        libdir = os.path.dirname(_LIB_PATH)
        tried = [os.path.join(libdir, "pcgrllm"), os.path.join(libdir, "..", "pcgrllm"),
                 os.path.join(here, "pcgrllm"), os.path.join(here, "..", "..", "pcgrllm")]
    for path in tried:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.abspath(path)
    raise PcgError("the pcgrllm binary, which runs reward files, was not found (looked at %s); run `make` or "
                   "set PCGRLLM_BIN" % ", ".join(os.path.normpath(p) for p in tried))
