#!/usr/bin/env python3
"""Reads the event files scripts/pcgrllm-tb wrote back and compares every
scalar with the numbers of the directory's metrics.jsonl and eval.json
files.  Prints one line and exits 0 when they agree, 1 otherwise.

    python3 tests/tb_check.py DIR LOGDIR

The records are read with their TFRecord framing (length, masked CRC,
data, masked CRC) and parsed with tensorboardX's own Event protobuf."""
import glob
import json
import math
import os
import struct
import sys

from tensorboardX.proto import event_pb2


def events(logdir):
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        with open(path, "rb") as f:
            while True:
                head = f.read(12)
                if len(head) < 12:
                    break
                (length,) = struct.unpack("<Q", head[:8])
                data = f.read(length)
                f.read(4)
                e = event_pb2.Event()
                e.ParseFromString(data)
                yield e


def expected(directory):
    """{(tag, step): value} as pcgrllm-tb should write them."""
    want = {}
    runs = []
    if os.path.isfile(os.path.join(directory, "grid.json")):
        for cell in sorted(os.listdir(os.path.join(directory, "cells"))):
            if os.path.isdir(os.path.join(directory, "cells", cell, "nodes")):
                runs.append((cell + "/", os.path.join(directory, "cells", cell)))
    elif os.path.isdir(os.path.join(directory, "nodes")):
        runs.append(("", directory))
    for prefix, run in runs:
        for node in sorted(os.listdir(os.path.join(run, "nodes"))):
            m = os.path.join(run, "nodes", node, "train", "metrics.jsonl")
            if os.path.isfile(m):
                for line in open(m):
                    obj = json.loads(line)
                    for k, v in obj.items():
                        if k != "step" and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                            want[(f"{prefix}node{node}/train/{k}", obj["step"])] = float(v)
            ev = os.path.join(run, "nodes", node, "eval.json")
            if os.path.isfile(ev):
                fitness = json.load(open(ev))["fitness"]
                want[(f"{prefix}nodes/fitness", int(node))] = float(fitness)
    return want


def main():
    directory, logdir = sys.argv[1], sys.argv[2]
    got = {}
    for e in events(logdir):
        for v in e.summary.value:
            got[(v.tag, e.step)] = v.simple_value
    want = expected(directory)
    if not want:
        print("tb_check: nothing expected: the directory has no finished node")
        return 1
    missing = [k for k in want if k not in got]
    wrong = [k for k in want if k in got and not math.isclose(got[k], want[k], rel_tol=1e-6, abs_tol=1e-6)]
    if missing or wrong:
        print(f"tb_check: {len(missing)} scalars missing, {len(wrong)} differ, e.g. {(missing + wrong)[:3]}")
        return 1
    print(f"tb_check: {len(want)} scalars agree with the files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
