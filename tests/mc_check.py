#!/usr/bin/env python3
"""Reads what `pcgrllm export --minecraft` wrote with readers that share no
code with it (zipfile, json and the NBT package from PyPI) and checks it
against the level files and the shipped block mapping (minecraft/blocks.txt).

usage: mc_check.py --zip FILE --ns NS --scale K [--nbt-dir DIR] NAME=LEVEL...
Exit 0 and "mc_check: ok ..." when everything holds; 1 with the first
difference; 77 with one line when the NBT package is not installed.
"""
import argparse
import gzip
import io
import json
import sys
import zipfile

try:
    from nbt import nbt
except ImportError:
    print("SKIP: the Python NBT package is not installed (python3 -m pip install NBT)")
    sys.exit(77)

TILES = {1: "EMPTY", 2: "WALL", 3: "PLAYER", 4: "BAT", 5: "SCORPION", 6: "SPIDER", 7: "KEY", 8: "DOOR", 9: "TREASURE"}
# what the shipped mapping says (minecraft/blocks.txt)
FLOOR = {"EMPTY": "minecraft:stone_bricks", "WALL": "minecraft:stone_bricks", "PLAYER": "minecraft:emerald_block",
         "BAT": "minecraft:stone_bricks", "SCORPION": "minecraft:stone_bricks", "SPIDER": "minecraft:stone_bricks",
         "KEY": "minecraft:gold_block", "DOOR": "minecraft:stone_bricks", "TREASURE": "minecraft:stone_bricks"}
MOBS = {"BAT": "minecraft:bat", "SCORPION": "minecraft:cave_spider", "SPIDER": "minecraft:spider"}
WALL_HEIGHT = 3


def fail(msg):
    print("mc_check: " + msg)
    sys.exit(1)


def read_level(path):
    rows = []
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            rows.append([int(v) for v in line.split(" ")])
    return rows


def structure_blocks(tag):
    """{(x, y, z): (name, {prop: value}, nbt or None)} and the size."""
    palette = []
    for p in tag["palette"].tags:
        props = {}
        if "Properties" in p:
            props = {k.name: k.value for k in p["Properties"].tags}
        palette.append((p["Name"].value, props))
    blocks = {}
    for b in tag["blocks"].tags:
        pos = tuple(v.value for v in b["pos"].tags)
        if pos in blocks:
            fail("two blocks at %s" % (pos,))
        name, props = palette[b["state"].value]
        blocks[pos] = (name, props, b["nbt"] if "nbt" in b else None)
    return blocks, [v.value for v in tag["size"].tags]


def check_level(name, rows, tag, k, ns, function):
    h, w = len(rows), len(rows[0])
    if tag["DataVersion"].value != 3955:
        fail("%s: DataVersion %d, expected 3955 (1.21.1)" % (name, tag["DataVersion"].value))
    blocks, size = structure_blocks(tag)
    want = [k * w + 2, 1 + WALL_HEIGHT, k * h + 2]
    if size != want:
        fail("%s: size %s, expected %s" % (name, size, want))
    if len(blocks) != size[0] * size[1] * size[2]:
        fail("%s: %d blocks for a %s box" % (name, len(blocks), size))
    for x in range(size[0]):  # the ring is BORDER, walled to the full height
        for z in (0, size[2] - 1):
            for y in range(1, 1 + WALL_HEIGHT):
                if blocks[(x, y, z)][0] != "minecraft:deepslate_bricks":
                    fail("%s: the ring at %s is %s" % (name, (x, y, z), blocks[(x, y, z)][0]))
    mobs = []
    for r in range(h):
        for c in range(w):
            tile = TILES[rows[r][c]]
            cx, cz = 1 + c * k + k // 2, 1 + r * k + k // 2
            for i in range(k):
                for j in range(k):
                    x, z = 1 + c * k + j, 1 + r * k + i
                    if blocks[(x, 0, z)][0] != FLOOR[tile]:
                        fail("%s: floor of %s at (%d,%d) is %s" % (name, tile, r, c, blocks[(x, 0, z)][0]))
                    above = blocks[(x, 1, z)][0]
                    if tile == "WALL":
                        for y in range(1, 1 + WALL_HEIGHT):
                            if blocks[(x, y, z)][0] != "minecraft:mossy_cobblestone":
                                fail("%s: WALL at (%d,%d) has %s at y %d" % (name, r, c, blocks[(x, y, z)][0], y))
                    elif (x, z) != (cx, cz) and above != "minecraft:air":
                        fail("%s: %s at (%d,%d) has %s beside its centre" % (name, tile, r, c, above))
            centre = blocks[(cx, 1, cz)]
            if tile == "TREASURE" and (centre[0] != "minecraft:chest" or centre[1].get("facing") != "south"):
                fail("%s: TREASURE at (%d,%d) holds %s %s" % (name, r, c, centre[0], centre[1]))
            if tile == "DOOR":
                top = blocks[(cx, 2, cz)]
                if centre[0] != "minecraft:oak_door" or centre[1].get("half") != "lower" or top[1].get("half") != "upper":
                    fail("%s: DOOR at (%d,%d) is not a two-block oak door" % (name, r, c))
            if tile == "KEY" and centre[0] != "minecraft:light_weighted_pressure_plate":
                fail("%s: KEY at (%d,%d) holds %s" % (name, r, c, centre[0]))
            if tile in MOBS:
                mobs.append((MOBS[tile], cx, cz))
            if tile == "PLAYER" and "tp @s ~%d.5 ~ ~%d.5" % (cx + 1, cz + 1) not in function:
                fail("%s: the function does not move the player onto (%d,%d):\n%s" % (name, r, c, function))
    seen = []
    for e in tag["entities"].tags:
        data = e["nbt"]
        if data["NoAI"].value != 1 or data["PersistenceRequired"].value != 1:
            fail("%s: a mob that moves or despawns" % name)
        bp = [v.value for v in e["blockPos"].tags]
        seen.append((data["id"].value, bp[0], bp[2]))
    if sorted(seen) != sorted(mobs):
        fail("%s: mobs %s, expected %s" % (name, sorted(seen), sorted(mobs)))
    if "place template %s:%s ~1 ~-1 ~1" % (ns, name) not in function:
        fail("%s: the function does not place the structure:\n%s" % (name, function))
    return len(blocks), len(seen)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zip", required=True)
    ap.add_argument("--ns", required=True)
    ap.add_argument("--scale", type=int, required=True)
    ap.add_argument("--nbt-dir")
    ap.add_argument("levels", nargs="+")
    a = ap.parse_args()
    z = zipfile.ZipFile(a.zip)
    if z.testzip() is not None:
        fail("a damaged member in %s" % a.zip)
    meta = json.loads(z.read("pack.mcmeta"))["pack"]
    if meta["pack_format"] != 48 or meta["supported_formats"] != [48, 81]:
        fail("pack.mcmeta: %s" % meta)
    names = set(z.namelist())
    total = mobs = 0
    for spec in a.levels:
        name, path = spec.split("=", 1)
        member = "data/%s/structure/%s.nbt" % (a.ns, name)
        if member not in names:
            fail("%s is not in the datapack (it holds %s)" % (member, sorted(names)))
        raw = z.read(member)
        gzip.decompress(raw)  # a gzip stream, as structure files are
        tag = nbt.NBTFile(fileobj=io.BytesIO(raw))
        function = z.read("data/%s/function/%s.mcfunction" % (a.ns, name)).decode()
        n, m = check_level(name, read_level(path), tag, a.scale, a.ns, function)
        total += n
        mobs += m
        if a.nbt_dir and open("%s/%s.nbt" % (a.nbt_dir, name), "rb").read() != raw:
            fail("%s/%s.nbt differs from the datapack's copy" % (a.nbt_dir, name))
    print("mc_check: ok, %d levels, %d blocks, %d mobs" % (len(a.levels), total, mobs))


if __name__ == "__main__":
    main()
