"""pcgrllm from Python: the engine's batched Dungeon environment, its
evaluator, level files and PNGs, through libpcgrllm.so (docs/python.md)."""
from ._lib import PcgError
from .env import VecDungeon
from .levels import evaluate, parse_level, read_level, render_png, write_level

__all__ = ["PcgError", "VecDungeon", "evaluate", "parse_level", "read_level", "render_png", "write_level"]
