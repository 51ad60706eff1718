"""What the bias maths share: head and seed ranges, checks of flags, seeds, deviations and positions."""

from __future__ import annotations

import numpy as np

from ..core import limits

#: Most attention heads (ALiBi slopes, T5 bias tables).
MAX_HEADS = 1024
#: Largest standard deviation of a seeded table.
MAX_SIGMA = 1000.0
#: Largest seed.
MAX_SEED = 2**32 - 1
#: Elements of a large matrix computed at a time: the temporaries stay a few MiB, whatever the matrix's size.
BLOCK_ELEMENTS = 2**18


def check_flag(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {limits.shown(value)}")
    return bool(value)


def check_seed(seed: object) -> int:
    return limits.check_int("seed", seed, 0, MAX_SEED)


def check_sigma(sigma: object) -> float:
    return limits.check_real("sigma", sigma, 0.0, MAX_SIGMA, low_open=True)


def query_key_positions(query_positions: object, key_positions: object) -> tuple[np.ndarray, np.ndarray]:
    """Both position arrays, and their query × key matrix checked against ``limits.MAX_SIMILARITY_ELEMENTS``."""
    most = limits.MAX_SIMILARITY_ELEMENTS
    queries = limits.check_positions(query_positions, "query_positions", most)
    keys = limits.check_positions(key_positions, "key_positions", most)
    limits.check_size("query_positions × key_positions", queries.size, keys.size, most)
    return queries, keys


def normal_table(shape: tuple[int, int], sigma: float, entropy: list[int]) -> np.ndarray:
    return sigma * np.random.default_rng(entropy).standard_normal(shape)
