import json
import subprocess

import numpy as np
import pytest

import pcgrllm

TARGETS = [1, 3, {"kind": "encounter", "enemies": ["BAT", "SPIDER"]}, '{"kind":"keydoor","gate":"KEY"}',
           {"kind": "pathlength", "length": 30, "tolerance": 3},
           {"kind": "pathlength", "player_key": 10, "key_door": 12, "tolerance": 1}]


def cli_eval(pcgrllm_bin, target, files):
    flag = ["--scenario", str(target)] if isinstance(target, int) else \
        ["--target", target if isinstance(target, str) else json.dumps(target)]
    out = subprocess.run([pcgrllm_bin, "eval", "--json"] + flag + [str(f) for f in files], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


@pytest.fixture(scope="module")
def level_files(pcgrllm_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("levels")
    subprocess.run([pcgrllm_bin, "levels", "--n", "12", "--seed", "5", "--policy", "random", "--out", str(d)],
                   check=True, capture_output=True)
    return sorted(d.glob("*.txt"))


@pytest.mark.parametrize("target", TARGETS, ids=range(len(TARGETS)))
def test_evaluate_equals_cli(pcgrllm_bin, level_files, target):
    want = cli_eval(pcgrllm_bin, target, level_files)
    maps = [pcgrllm.read_level(f) for f in level_files]
    got = pcgrllm.evaluate(np.stack(maps), target, names=[str(f) for f in level_files])
    assert got == want
    assert [m["score"] for m in got["levels"]] == [m["score"] for m in want["levels"]]


def test_write_read_parse_roundtrip(tmp_path):
    lv = pcgrllm.VecDungeon(1, seed=2).maps[0].copy()
    pcgrllm.write_level(tmp_path / "a.txt", lv, comment="from python")
    text = (tmp_path / "a.txt").read_text()
    assert text.startswith("# from python\n")
    assert pcgrllm.read_level(tmp_path / "a.txt").tobytes() == lv.tobytes()
    assert pcgrllm.parse_level(text).tobytes() == lv.tobytes()


def test_render_png(tmp_path):
    lv = pcgrllm.VecDungeon(1, seed=2).maps[0]
    pcgrllm.render_png(tmp_path / "a.png", lv, cell_px=16)
    assert (tmp_path / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def one_line(excinfo):
    msg = str(excinfo.value)
    assert msg and "\n" not in msg
    return msg


def test_damaged_inputs_raise(tmp_path):
    (tmp_path / "bad.txt").write_text("1 1 1\n1 12 1\n")
    with pytest.raises(pcgrllm.PcgError) as e:
        pcgrllm.read_level(tmp_path / "bad.txt")
    assert "bad.txt:2" in one_line(e)
    with pytest.raises(pcgrllm.PcgError) as e:
        pcgrllm.read_level(tmp_path / "missing.txt")
    one_line(e)
    with pytest.raises(pcgrllm.PcgError) as e:
        pcgrllm.parse_level("1 1\n1 1 1\n")
    one_line(e)
    good = np.ones((5, 5), dtype=np.uint8)
    with pytest.raises(pcgrllm.PcgError) as e:
        pcgrllm.evaluate([good], {"kind": "encounter", "enemies": ["DRAGON"]})
    assert one_line(e).startswith("target:")
    with pytest.raises(pcgrllm.PcgError) as e:
        pcgrllm.evaluate([good], '{"kind": "keydoor", "gate": "KEY"')
    one_line(e)
    for scenario in (9, 0, -1):
        with pytest.raises(pcgrllm.PcgError, match="neither a scenario number 1..4 nor target JSON") as e:
            pcgrllm.evaluate([good], scenario)
        one_line(e)
    bad = good.copy()
    bad[2, 3] = 0
    with pytest.raises(pcgrllm.PcgError, match="level 1: tile 0 at row 2, column 3") as e:
        pcgrllm.evaluate([good, bad], 1)
    one_line(e)
    with pytest.raises(pcgrllm.PcgError) as e:
        pcgrllm.write_level(tmp_path / "w.txt", bad)
    one_line(e)
    with pytest.raises(pcgrllm.PcgError) as e:
        pcgrllm.write_level(tmp_path / "no" / "such" / "dir" / "w.txt", good)
    one_line(e)
    with pytest.raises(ValueError):
        pcgrllm.evaluate(np.ones(5, dtype=np.uint8), 1)
    with pytest.raises(ValueError, match="no levels"):
        pcgrllm.evaluate([], 1)
    with pytest.raises(TypeError):
        pcgrllm.evaluate([good], 1.5)


def test_damaged_library_one_line(tmp_path):
    """A file that is not the library, named by PCGRLLM_LIB: one line, no traceback of ctypes'."""
    import os
    import sys
    bad = tmp_path / "libpcgrllm.so"
    bad.write_bytes(b"not an ELF file")
    env = dict(os.environ, PCGRLLM_LIB=str(bad))
    code = "import pcgrllm\ntry:\n    pcgrllm.VecDungeon(1)\nexcept pcgrllm.PcgError as e:\n    print(e)\n"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.count("\n") == 1 and "is not a pcgrllm library" in out and str(bad) in out
    env["PCGRLLM_LIB"] = str(tmp_path / "absent.so")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.count("\n") == 1 and "not found" in out
