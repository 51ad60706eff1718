"""The shared cache of encoded rows: same values as encode, bounded memory, no stale entries."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from posenc_gui.model import AxisSample, EncodingParams, offset_profile
from posenc_gui.model import cache
from posenc_gui.model.panels.table_data import compute_profile
from tolerances import assert_close, cosine_atol
from waiting import TIMEOUT_S


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def test_values_equal_encode_and_are_read_only():
    params = EncodingParams.validated(seq_len=1000, d_model=64, base=500.0)
    rows, cols = AxisSample(3, 7, 40), AxisSample(1, 3, 20)
    values = cache.encode_sampled(params, rows, cols)
    expected = params.encode(rows.indices().astype(np.float64), dims=cols.indices())
    assert np.array_equal(values, expected)
    with pytest.raises(ValueError):
        values[0, 0] = 1.0
    assert cache.encode_sampled(params, rows, cols) is values  # served from the cache


def test_a_sample_of_every_dimension_is_the_full_encoding_entry():
    params = EncodingParams(seq_len=50, d_model=16)
    rows = AxisSample(0, 1, 50)
    full = cache.encode_sampled(params, rows)
    assert cache.encode_sampled(params, rows, AxisSample(0, 1, 16)) is full
    assert np.array_equal(full, params.encode())


def test_new_parameters_never_get_old_values():
    rows = AxisSample(0, 1, 30)
    first = cache.encode_sampled(EncodingParams.validated(seq_len=30, d_model=8, base=10000.0), rows)
    second = cache.encode_sampled(EncodingParams.validated(seq_len=30, d_model=8, base=100.0), rows)
    assert not np.array_equal(first, second)
    assert np.array_equal(second, EncodingParams.validated(seq_len=30, d_model=8, base=100.0).encode())


def test_memory_stays_within_its_bound(monkeypatch):
    monkeypatch.setattr(cache, "MAX_CACHE_BYTES", 3 * 64 * 8 * 100)
    params = EncodingParams(seq_len=10_000, d_model=64)
    for start in range(0, 2000, 100):
        cache.encode_sampled(params, AxisSample(start, 1, 100))
        assert cache.cached_bytes() <= cache.MAX_CACHE_BYTES
    assert cache.cached_bytes() == 3 * 64 * 8 * 100  # the three newest entries


def test_the_number_of_entries_stays_within_its_bound(monkeypatch):
    monkeypatch.setattr(cache, "MAX_CACHE_ENTRIES", 3)
    params = EncodingParams(seq_len=10_000, d_model=64)
    kept = [cache.encode_sampled(params, AxisSample(start, 1, 100)) for start in range(0, 2000, 100)]
    assert cache.cached_bytes() == 3 * 64 * 8 * 100  # the three newest entries, far below the byte bound
    assert cache.encode_sampled(params, AxisSample(1900, 1, 100)) is kept[-1]  # the newest is served
    again = cache.encode_sampled(params, AxisSample(0, 1, 100))  # the oldest was dropped: computed again
    assert again is not kept[0] and np.array_equal(again, kept[0])


def test_an_entry_larger_than_its_limit_is_returned_but_not_kept(monkeypatch):
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 1000)
    params = EncodingParams(seq_len=100, d_model=8)
    values = cache.encode_sampled(params, AxisSample(0, 1, 100))
    assert values.shape == (100, 8)
    assert cache.cached_bytes() == 0


def test_threads_sharing_the_cache_get_correct_values():
    params = EncodingParams(seq_len=4096, d_model=128)
    samples = [AxisSample(s, 3, 200) for s in range(0, 400, 40)]
    errors = []

    def work():
        for sample in samples * 3:
            got = cache.encode_sampled(params, sample)
            if not np.array_equal(got, params.encode(sample.indices().astype(np.float64))):
                errors.append(sample)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.parametrize("reference", [0, 37, 64, 99])
def test_profile_from_cached_rows_matches_offset_profile(reference):
    params = EncodingParams(seq_len=100, d_model=32)
    targets = AxisSample(0, 3, 34)  # 0, 3, …, 99: some references are not among them
    data = compute_profile(params, "cosine", reference, targets)
    positions = np.union1d(targets.indices(), [reference])
    assert np.array_equal(data.offsets, positions - reference)
    expected = offset_profile("sinusoidal", reference, positions - reference, 32, "cosine")
    assert_close(data.profile, expected, cosine_atol(32))  # the same rows, multiplied as matrices of other shapes
    assert_close(data.profile[np.flatnonzero(data.offsets == 0)[0]], 1.0, cosine_atol(32) / 2)


class _InFlightWatched(dict):
    """The cache's table of computations in flight, noting when a second caller finds one there."""

    def __init__(self) -> None:
        super().__init__()
        self.found = threading.Event()

    def get(self, key, default=None):
        running = super().get(key, default)
        if running is not None:
            self.found.set()
        return running


def test_concurrent_requests_for_the_same_rows_encode_them_once(monkeypatch):
    params = EncodingParams(seq_len=10_000, d_model=256)
    sample = AxisSample(0, 7, 1000)
    calls = []
    started = threading.Event()
    original = EncodingParams.encode
    in_flight = _InFlightWatched()
    monkeypatch.setattr(cache, "_in_flight", in_flight)

    def slow_encode(self, positions=None, dims=None):
        calls.append(1)
        started.set()
        assert in_flight.found.wait(TIMEOUT_S)  # the other thread asks meanwhile
        return original(self, positions, dims)

    monkeypatch.setattr(EncodingParams, "encode", slow_encode)
    results = []
    first = threading.Thread(target=lambda: results.append(cache.encode_sampled(params, sample)))
    first.start()
    started.wait()
    results.append(cache.encode_sampled(params, sample))
    first.join()
    assert len(calls) == 1
    assert results[0] is results[1]


def test_a_failed_computation_does_not_block_the_next_request(monkeypatch):
    params = EncodingParams(seq_len=100, d_model=8)
    sample = AxisSample(0, 1, 100)
    original = EncodingParams.encode
    monkeypatch.setattr(EncodingParams, "encode", lambda *a, **k: (_ for _ in ()).throw(MemoryError()))
    with pytest.raises(MemoryError):
        cache.encode_sampled(params, sample)
    monkeypatch.setattr(EncodingParams, "encode", original)
    assert np.array_equal(cache.encode_sampled(params, sample), params.encode())


def test_clear_caches_forgets_every_kept_result():
    from posenc_gui.model import clear_caches
    from posenc_gui.model.analyses import addition

    params = EncodingParams(seq_len=64, d_model=64)
    cache.encode_sampled(params, AxisSample(0, 1, 64))
    addition.scale_sweep(params)
    addition.orthogonality(params)
    assert cache.cached_bytes() > 0
    kept = (addition._split_sweep, addition._cosine_terms, addition._cosines_at, addition._random_pairs,
            addition._embedding_norms)
    assert all(function.cache_info().currsize > 0 for function in kept) and addition._EMBEDDING_BLOCKS
    clear_caches()
    assert cache.cached_bytes() == 0
    assert all(function.cache_info().currsize == 0 for function in kept) and not addition._EMBEDDING_BLOCKS


def rows_kept(params: EncodingParams, count: int) -> bool:
    """Whether the shared cache holds the rows 0 … count − 1 of ``params`` (other tests' workers may add others)."""
    return (params, AxisSample(0, 1, count), None) in cache._entries


@pytest.fixture
def row_encodes(monkeypatch):
    """How many rows each ``EncodingParams.encode`` call of this thread evaluates (the shared cache's route)."""
    calls = []
    real, me = EncodingParams.encode, threading.get_ident()

    def counted(self, positions=None, dims=None):
        if threading.get_ident() == me:
            calls.append(self.seq_len if positions is None else len(positions))
        return real(self, positions, dims)

    monkeypatch.setattr(EncodingParams, "encode", counted)
    return calls


def test_the_addition_docks_cosine_terms_share_the_core_panels_rows(row_encodes):
    from posenc_gui.model import clear_caches
    from posenc_gui.model.analyses import addition

    clear_caches()
    params = EncodingParams(seq_len=128, d_model=96)
    grid = cache.encode_sampled(params, AxisSample(0, 1, 128)).copy()  # as the heatmap and similarity ask
    row_encodes.clear()
    positions, _zz, zp, pp = addition._cosine_terms(params, 0)
    assert 128 not in row_encodes  # the rows came from the cache
    np.testing.assert_array_equal(positions, np.arange(128.0))
    np.testing.assert_array_equal(pp, np.einsum("ij,ij->i", grid, grid))
    z = np.random.default_rng([0, 0xC05, 96, 128]).standard_normal((128, 96))
    np.testing.assert_array_equal(zp, np.einsum("ij,ij->i", z, grid))
    # Asked first, the Addition dock's terms leave the rows for the core panels.
    clear_caches()
    addition._cosine_terms(params, 0)
    assert rows_kept(params, 128)


def test_the_uniqueness_view_shares_the_core_panels_rows(row_encodes):
    from posenc_gui.model import clear_caches
    from posenc_gui.model.analyses import analysis
    from posenc_gui.model.panels.panel_data import uniqueness_data

    clear_caches()
    params = EncodingParams(seq_len=128, d_model=64)
    cache.encode_sampled(params, AxisSample(0, 1, 128))
    row_encodes.clear()
    data = uniqueness_data(params, 5, False)
    assert row_encodes == []  # nothing encoded again
    alone = analysis.uniqueness("sinusoidal", np.arange(128.0), 64, top=5)
    np.testing.assert_array_equal(data.result.nearest_distance, alone.nearest_distance)
    assert data.result.near_repeats == alone.near_repeats
    clear_caches()
    uniqueness_data(params, 5, False)  # asked first, it leaves the rows for the core panels
    assert rows_kept(params, 128)


def test_rows_encoder_gives_what_encode_gives_at_any_positions():
    from posenc_gui.model import clear_caches

    clear_caches()
    params = EncodingParams.validated(seq_len=40, d_model=24, base=321.0)
    encoder = cache.rows_encoder(params)
    assert rows_kept(params, 40)  # the rows 0 … 39, kept for the core panels too
    inside = np.array([0.0, 39.0, 7.0, 7.0])
    mixed = np.array([3.0, 40.0, 2.5, 1e6, 39.0])  # past the end, between integers, far away
    for positions in (inside, mixed, np.empty(0)):
        np.testing.assert_array_equal(encoder(positions), params.encode(positions))


def test_the_relative_view_shares_the_core_panels_rows(row_encodes):
    from posenc_gui.model import clear_caches
    from posenc_gui.model.analyses import analysis
    from posenc_gui.model.panels.panel_data import relative_data

    clear_caches()
    params = EncodingParams(seq_len=128, d_model=64)
    cache.encode_sampled(params, AxisSample(0, 1, 128))
    row_encodes.clear()
    data = relative_data(params, 64, 4)
    assert row_encodes == [64]  # only p + k past the end (128 … 191); the rows 0 … 127 came from the cache
    positions, offsets = np.arange(128.0), np.arange(65.0)
    alone = analysis.offset_spread("sinusoidal", positions, 64, offsets)
    for name in ("minimum", "maximum", "mean", "spread"):
        np.testing.assert_array_equal(getattr(data.spread, name), getattr(alone, name))
    np.testing.assert_array_equal(data.profiles,
                                  analysis.offset_profiles("sinusoidal", data.references, offsets, 64))
    clear_caches()
    relative_data(params, 64, 4)  # asked first, it leaves the rows for the core panels
    assert rows_kept(params, 128)
