#!/usr/bin/env python3
"""The layers of docs/architecture.md, checked against the code.

Reads the layer table of docs/architecture.md (its rows name the folders,
top layer first; folders named in one row share a layer) and every
`#include "..."` in the sources of those folders.  An include of a header
that lives in a higher layer is an error, printed as one line
`FILE:LINE: includes NAME (FOLDER), which is above FOLDER`.  A header
name found in two folders is an error too, since every folder is on the
include path.  Exit status 0 when the code follows the plan, 1 otherwise.

    python3 scripts/check-layers.py [REPO]
"""
import os
import re
import sys


def layer_table(doc):
    """The folders of each row of the table under '## The layers', in order."""
    rows, inside = [], False
    for line in doc.splitlines():
        if line.startswith("## "):
            inside = line.strip() == "## The layers"
            continue
        if not inside or not line.startswith("| `"):
            continue
        first_cell = line.split("|")[1]
        folders = [f.strip("/") for f in re.findall(r"`([^`]+/)`", first_cell)]
        if folders:
            rows.append(folders)
    return rows


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    os.chdir(repo)
    rows = layer_table(open("docs/architecture.md", encoding="utf-8").read())
    if not rows:
        print("check-layers: docs/architecture.md has no layer table under '## The layers'")
        return 1
    rank = {folder: i for i, row in enumerate(rows) for folder in row}
    home, errors = {}, []
    sources = []
    for folder in rank:
        if not os.path.isdir(folder):
            errors.append("docs/architecture.md names %s/, which does not exist" % folder)
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".c", ".h")):
                continue
            sources.append((folder, name))
            if name.endswith(".h"):
                if name in home:
                    errors.append("%s is in %s/ and in %s/: header names must be unique" % (name, home[name], folder))
                home[name] = folder
    for folder in sorted({d for d in (os.path.join("host", x) for x in os.listdir("host")) if os.path.isdir(d)}):
        if folder not in rank:
            errors.append("%s/ is not in the layer table of docs/architecture.md" % folder)
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for folder, name in sources:
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = include.match(line)
                if not m:
                    continue
                target = home.get(os.path.basename(m.group(1)))
                if target and rank[target] < rank[folder]:
                    errors.append("%s:%d: includes %s (%s/), which is above %s/" % (path, n, m.group(1), target, folder))
    for e in errors:
        print(e)
    if errors:
        print("check-layers: %d problem%s; the layers are in docs/architecture.md" % (len(errors), "" if len(errors) == 1 else "s"))
        return 1
    print("check-layers: %d files in %d layers, every include points down" % (len(sources), len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
