"""Bad input to the model's public functions: a ValueError that starts with the parameter's name and states
its range, sizes checked before anything is converted or allocated."""

import itertools
import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_gui.model import (
    AxisSample,
    EncodingParams,
    aliased,
    align_permutation,
    columns,
    curve_positions,
    encode,
    formula_term,
    logit_split,
    offset_profile,
    pairwise,
    permutation_demo,
    permutation_dict,
    sample_axis,
    self_attention,
    similarity_matrix,
    value_range,
)
from posenc_gui.model import cache
from posenc_gui.model.analyses import addition
from posenc_gui.model.analyses import analysis
from posenc_gui.model.panels import panel_data
from posenc_gui.model.analyses import scorecard
from posenc_gui.model.analyses import spectrum
from waiting import TIMEOUT_S

nan, inf = float("nan"), float("inf")
P = EncodingParams()
COLS = columns("sinusoidal", 4)

# (call, parameter, a piece of its allowed range); each case raised another exception, was accepted, or
# named another parameter (or no range) before the checks were made thorough.
CASES = {
    # encode and its relatives
    "encode positions: a billion in a range": (lambda: encode("sinusoidal", range(10**9), 2), "positions",
                                                "at most 16,777,216 positions"),
    "encode positions: text": (lambda: encode("sinusoidal", ["1", "2"], 2), "positions", "0…1e+12"),
    "encode positions: true/false": (lambda: encode("sinusoidal", [True, False], 2), "positions", "0…1e+12"),
    "encode positions: None": (lambda: encode("sinusoidal", None, 2), "positions", "0…1e+12"),
    "encode positions: complex": (lambda: encode("sinusoidal", [1j], 2), "positions", "0…1e+12"),
    "encode base: text": (lambda: encode("sinusoidal", [1], 4, base="10000"), "base", "> 1 and ≤ 1e+12"),
    "encode base: decimal": (lambda: encode("sinusoidal", [1], 4, base=Decimal(100)), "base", "> 1"),
    "encode base: 0-d array": (lambda: encode("sinusoidal", [1], 4, base=np.array(100.0)), "base", "> 1"),
    "encode dims: a billion in a range": (lambda: encode("sinusoidal", [1], 4, dims=range(10**9)), "dims",
                                          "at most 33,554,432"),
    "encode dims: ragged": (lambda: encode("sinusoidal", [1], 4, dims=[[1], [1, 2]]), "dims", "1-D"),
    "formula_term dim: text": (lambda: formula_term("sinusoidal", 4, "1"), "dim", "0…3"),
    "formula_term dim: past d_model": (lambda: formula_term("sinusoidal", 4, 9), "dim", "0…3"),
    "EncodingParams base: text": (lambda: EncodingParams.validated(base="10000").validate(), "base", "> 1"),
    "EncodingParams scheme: a list": (lambda: EncodingParams(scheme=["x"]).validate(), "scheme", "sinusoidal"),
    # sampling
    "sample_axis low: text": (lambda: sample_axis("a", 3, 10, 10), "low", "finite"),
    "sample_axis low: None": (lambda: sample_axis(None, 3, 10, 10), "low", "finite"),
    "sample_axis low: an array": (lambda: sample_axis(np.array([1.0, 2.0]), 3, 10, 10), "low", "finite"),
    "sample_axis low: true": (lambda: sample_axis(True, 3, 10, 10), "low", "finite"),
    "sample_axis high: NaN": (lambda: sample_axis(0, nan, 10, 10), "high", "finite"),
    "curve_positions low: NaN": (lambda: curve_positions(nan, 3, 10, 10), "low", "finite"),
    "curve_positions high: infinity": (lambda: curve_positions(0, inf, 10, 10), "high", "finite"),
    "curve_positions low: text": (lambda: curve_positions("a", 3, 10, 10), "low", "finite"),
    "aliased stride: text": (lambda: aliased([1.0], "2"), "stride", "0…1e+12"),
    "aliased stride: NaN": (lambda: aliased([1.0], nan), "stride", "0…1e+12"),
    "aliased wavelength: text": (lambda: aliased("a", 2), "wavelength", "0…inf"),
    "aliased wavelength: a billion in a range": (lambda: aliased(range(10**9), 2), "wavelength", "at most"),
    "value_range columns: not Columns": (lambda: value_range("x", [1.0], [2.0]), "columns", "columns()"),
    "value_range low: one number": (lambda: value_range(COLS, [nan], [1.0]), "low", "0…1e+12"),
    "value_range low: a hundred million": (lambda: value_range(COLS, range(10**8), range(10**8)), "low",
                                           "at most 8,388,608"),
    "value_range high: below low": (lambda: value_range(COLS, [2.0], [1.0]), "high", "≥ low"),
    # similarity
    "pairwise a: objects": (lambda: pairwise([[None]], [[1.0]], "dot"), "a", "finite real numbers"),
    "pairwise a: complex": (lambda: pairwise([[1j]], [[1.0]], "dot"), "a", "finite real numbers"),
    "pairwise a: NaN": (lambda: pairwise([[nan]], [[1.0]], "dot"), "a", "finite real numbers"),
    "pairwise a: a billion int8 columns": (lambda: pairwise(np.zeros((1, 10**9), np.int8), [[1.0]], "dot"),
                                           "a", "at most 33,554,432"),
    "pairwise b: other columns": (lambda: pairwise([[1.0, 2.0]], [[1.0]], "dot"), "b", "columns as a (2)"),
    "similarity_matrix positions: a million": (lambda: similarity_matrix("sinusoidal", range(10**6), 4),
                                               "positions", "at most 4,096"),
    "offset_profile reference: text": (lambda: offset_profile("sinusoidal", "a", [1], 4), "reference",
                                       "0…1e+12"),
    "offset_profile reference: NaN": (lambda: offset_profile("sinusoidal", nan, [1], 4), "reference", "0…1e+12"),
    "offset_profile reference: true": (lambda: offset_profile("sinusoidal", True, [1], 4), "reference",
                                       "0…1e+12"),
    "offset_profile offsets: text": (lambda: offset_profile("sinusoidal", 1, "ab", 4), "offsets", "1e+12"),
    "offset_profile offsets: before position 0": (lambda: offset_profile("sinusoidal", 1, [-5], 4), "offsets",
                                                  "-1…"),
    "offset_profile offsets: a billion": (lambda: offset_profile("sinusoidal", 1, range(10**9), 2), "offsets",
                                          "at most 16,777,216"),
    # the attention demo
    "self_attention tokens: None": (lambda: self_attention(None), "tokens", "1…512 words"),
    "self_attention tokens: a number": (lambda: self_attention(5), "tokens", "1…512 words"),
    "self_attention scheme_kwargs: a number": (lambda: self_attention(["a"], scheme="sinusoidal",
                                                                      scheme_kwargs=5), "scheme_kwargs", "base"),
    "logit_split trace: text": (lambda: logit_split("x"), "trace", "self_attention()"),
    "align_permutation tokens_a: None": (lambda: align_permutation(None, ["a"]), "tokens_a", "1…512 words"),
    "align_permutation tokens_b: lists": (lambda: align_permutation(["a"], [[1]]), "tokens_b", "1…512"),
    "permutation_dict demo: text": (lambda: permutation_dict("x"), "demo", "permutation_demo()"),
    "permutation_demo scheme: a list": (lambda: permutation_demo(scheme=["x"]), "scheme", "sinusoidal"),
    "permutation_demo scheme_kwargs: a number": (lambda: permutation_demo(scheme_kwargs=5), "scheme_kwargs",
                                                 "base"),
    # the analyses behind the panels
    "uniqueness encoded: NaN": (lambda: analysis.uniqueness("sine", range(10), 4, encoded=np.full((10, 4), nan)),
                                "encoded", "finite"),
    "pe_norms encoded: a billion int8": (lambda: analysis.pe_norms("sine", range(10), 4,
                                                                   encoded=np.zeros((10**5, 10**4), np.int8)),
                                         "encoded", "at most 40"),
    "embedding_norm scale: text": (lambda: analysis.embedding_norm(4, "1"), "scale", "> 0 and ≤ 1e+06"),
    "linear_relation k: text": (lambda: analysis.linear_relation("sinusoidal", range(10), 4, "1"), "k",
                                "-1e+12…1e+12"),
    "offset_spread offsets: a billion": (lambda: analysis.offset_spread("sinusoidal", range(10), 4,
                                                                        range(10**9)), "offsets", "65,536"),
    "offset_spread offsets: text": (lambda: analysis.offset_spread("sinusoidal", range(10), 4, "ab"), "offsets",
                                    "1e+12"),
    "offset_spread encoder: a number": (lambda: analysis.offset_spread("sinusoidal", range(10), 4, [1],
                                                                       encoder=5), "encoder", "function"),
    "offset_profiles references: NaN": (lambda: analysis.offset_profiles("sinusoidal", [nan], [1], 4),
                                        "references", "0…1e+12"),
    "sample_positions seq_len: text": (lambda: addition.sample_positions("x", 3), "seq_len", "1…1048576"),
    "sample_positions count: a billion": (lambda: addition.sample_positions(10, 10**9), "count", "1…1048576"),
    "split_at_scale scale: text": (lambda: addition.split_at_scale(P, "1"), "scale", "1e-06…1e+06"),
    "split_at_scale params: text": (lambda: addition.split_at_scale("x", 1.0), "params", "EncodingParams"),
    "scale_sweep scales: a billion": (lambda: addition.scale_sweep(P, range(10**9)), "scales", "1,024"),
    "default_dims d_model: text": (lambda: addition.default_dims("x"), "d_model", "2…8192"),
    "orthogonality_embeddings count: a billion": (lambda: addition.orthogonality_embeddings(0, 10**9, 10**9),
                                                  "count", "1…4096"),
    "orthogonality_positions count: a billion": (lambda: addition.orthogonality_positions(10, 10**9, 0),
                                                 "count", "1…4096"),
    "spectrum step_tol: text": (lambda: spectrum.spectrum(P, step_tol="0.5"), "step_tol", "> 0 and ≤ 2"),
    "spectrum params: text": (lambda: spectrum.spectrum("x"), "params", "EncodingParams"),
    "sample_range count: a billion": (lambda: scorecard.sample_range(0, 10**12, 10**9), "count", "16777216"),
    "sample_range start: text": (lambda: scorecard.sample_range("0", 10, 3), "start", "0…"),
    "score_scheme params: text": (lambda: scorecard.score_scheme("x"), "params", "EncodingParams"),
    "scorecard schemes: a number": (lambda: scorecard.scorecard(P, schemes=5), "schemes", "sinusoidal"),
    "addition_data seed: a list": (lambda: panel_data.addition_data(P, 1.0, seed=[1]), "seed", "0…4294967295"),
    "reference_positions count: a billion": (lambda: panel_data.reference_positions(10, 10**9), "count", "1…"),
    "relative_data max_offset: text": (lambda: panel_data.relative_data(P, "x", 3), "max_offset", "1…1048576"),
    "relative_data max_offset: 10¹²": (lambda: panel_data.relative_data(P, 10**12, 3), "max_offset",
                                       "1…1048576"),
    "fit_width rows: text": (lambda: panel_data.fit_width(512, "x"), "rows", "1…512"),
    "linear_relation fit_width: 0": (lambda: analysis.linear_relation("all_sine", range(10), 4, 1, fit_width=0),
                                     "fit_width", "1…4"),
    "linear_relation cutoffs: 2": (lambda: analysis.linear_relation("all_sine", range(10), 4, 1, cutoffs=[2.0]),
                                   "cutoffs", "0…1"),
    "linear_relation fit_positions: −1": (lambda: analysis.linear_relation("all_sine", range(10), 4, 1,
                                                                           fit_positions=[-1.0]),
                                          "fit_positions", "0…1e+12"),
    "T_k matrix rows: repeated": (lambda: analysis.linear_relation("sinusoidal", range(10), 4, 1).matrix([0, 0]),
                                  "rows", "distinct"),
    "encode_sampled positions: text": (lambda: cache.encode_sampled(P, "x"), "positions", "AxisSample"),
    "encode_sampled positions: a billion": (lambda: cache.encode_sampled(P, AxisSample(0, 1, 10**9)),
                                            "positions", "33,554,432"),
    "rows_encoder positions: a billion": (lambda: cache.rows_encoder(P)(range(10**9)), "positions",
                                          "at most 65,536 positions"),
}


def assert_names(error: ValueError, name: str, allowed: str) -> None:
    message = str(error)
    assert message.startswith((f"{name} ", f"{name}:")), message
    assert allowed in message, message


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_bad_input_is_a_value_error_naming_the_parameter_and_its_range(case):
    call, name, allowed = CASES[case]
    with pytest.raises(ValueError) as info:
        call()
    assert_names(info.value, name, allowed)


NOT_REAL = st.one_of(
    st.text(max_size=6), st.booleans(), st.none(), st.just(nan), st.just(inf), st.just(-inf),
    st.complex_numbers(allow_nan=False, allow_infinity=False).filter(lambda z: z.imag != 0),
    st.lists(st.floats(0, 10), min_size=1, max_size=3), st.decimals(allow_nan=False, allow_infinity=False),
    st.builds(np.array, st.floats(2, 10)), st.builds(np.bool_, st.booleans()),
)
NOT_NUMBERS = st.one_of(
    st.lists(st.text(min_size=1, max_size=3), min_size=1, max_size=4),
    st.lists(st.booleans(), min_size=1, max_size=4),
    st.lists(st.one_of(st.floats(0, 10), st.none()), min_size=1, max_size=4).filter(lambda v: None in v),
    st.lists(st.complex_numbers(allow_nan=False, allow_infinity=False).filter(lambda z: z.imag != 0),
             min_size=1, max_size=3),
    st.lists(st.sampled_from([nan, inf, -inf, -1.0, 2e12]), min_size=1, max_size=3),
)
#: A parameter, how to pass it a value, and the values it must refuse: one real number, or an array of them.
PROPERTIES = [
    ("base", lambda v: encode("sinusoidal", [1], 4, base=v), NOT_REAL),
    ("low", lambda v: curve_positions(v, 3, 10, 10), NOT_REAL),
    ("high", lambda v: sample_axis(0, v, 10, 10), NOT_REAL),
    ("reference", lambda v: offset_profile("sinusoidal", v, [1], 4), NOT_REAL),
    ("stride", lambda v: aliased([1.0], v), NOT_REAL),
    ("scale", lambda v: analysis.embedding_norm(4, v), NOT_REAL),
    ("k", lambda v: analysis.linear_relation("sinusoidal", range(10), 4, v), NOT_REAL),
    ("step_tol", lambda v: spectrum.spectrum(P, step_tol=v), NOT_REAL),
    ("positions", lambda v: encode("sinusoidal", v, 4), NOT_NUMBERS),
    ("offsets", lambda v: offset_profile("sinusoidal", 0, v, 4), NOT_NUMBERS),
    ("low", lambda v: value_range(COLS, v, v), NOT_NUMBERS),
    ("scales", lambda v: addition.scale_sweep(P, v), NOT_NUMBERS),
]


@pytest.mark.parametrize("name, call, values", PROPERTIES,
                         ids=[f"{p[0]} ({'a number' if p[2] is NOT_REAL else 'an array'})" for p in PROPERTIES])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_a_number_parameter_refuses_text_flags_objects_complex_nan_and_out_of_range(name, call, values, data):
    with pytest.raises(ValueError) as info:
        call(data.draw(values))
    assert str(info.value).startswith(f"{name} must be "), info.value


# ------------------------------------------------------------- sizes first
class Unreadable(Sequence):
    """A sequence that says how long it is and must not be read."""

    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index):
        raise AssertionError("the values were read before their count was checked")


SIZED = {
    "positions": lambda v: encode("sinusoidal", v, 512),
    "dims": lambda v: encode("sinusoidal", [0.0], 8, dims=v),
    "offsets": lambda v: offset_profile("sinusoidal", 5, v, 4),
    "wavelength": lambda v: aliased(v, 1.0),
    "low": lambda v: value_range(COLS, v, [1.0]),
    "scales": lambda v: addition.scale_sweep(P, v),
    "references": lambda v: analysis.offset_profiles("sinusoidal", v, [1.0], 4),
}


@pytest.mark.parametrize("name", list(SIZED))
def test_a_sequence_past_the_limit_is_refused_before_it_is_read(name):
    with pytest.raises(ValueError, match=rf"^{name}: at most [\d,]+ \w+.*got 1,000,000,000"):
        SIZED[name](Unreadable(10**9))


def test_an_endless_iterable_is_read_only_up_to_the_limit():
    counter = itertools.count()
    with pytest.raises(ValueError, match=r"^positions: at most 4,096 positions × 8,192 dimensions"):
        encode("sinusoidal", (float(i) for i in counter), 8192)
    assert next(counter) == 4097  # the limit, and one more to see that there are more
    np.testing.assert_array_equal(encode("sinusoidal", (float(i) for i in range(5)), 8), encode("sinusoidal",
                                                                                              range(5), 8))


#: On Linux the child's address space is capped a little above what it uses: a conversion of the positions
#: (8 GB for the range, 800 MB for the int8 array) fails there at once instead of filling the machine.
CHILD = r"""
import json, resource, tracemalloc
import numpy as np
from posenc_gui.model import encode

int8 = np.zeros(10**8, dtype=np.int8)
try:
    with open("/proc/self/statm") as statm:
        used = int(statm.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + 2**29, resource.RLIM_INFINITY))
except OSError:
    pass  # no /proc (not Linux): uncapped
results = {}
for name, positions in (("range", range(10**9)), ("int8", int8)):
    tracemalloc.start()
    try:
        encode("sinusoidal", positions, 2)
        outcome = "accepted"
    except Exception as error:
        outcome = f"{type(error).__name__}: {error}"
    results[name] = [outcome, tracemalloc.get_traced_memory()[1]]
    tracemalloc.stop()
print(json.dumps(results))
"""


def test_huge_positions_are_refused_without_allocating_them():
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-I", "-c", CHILD], capture_output=True, text=True, timeout=TIMEOUT_S,
                            env=env)
    assert result.returncode == 0, result.stderr
    results = json.loads(result.stdout)
    for name, (outcome, peak) in results.items():
        assert outcome.startswith("ValueError: positions: at most 16,777,216 positions"), (name, outcome)
        assert peak < 2**20, (name, peak)  # bytes traced while refusing: no copy of the positions


def test_valid_inputs_keep_their_results():
    positions = [0, 1, 2.5, 17]
    reference = encode("sinusoidal", np.array(positions, dtype=np.float64), 8)
    for same in (positions, tuple(positions), np.array(positions, dtype=np.float32), iter(positions)):
        np.testing.assert_array_equal(encode("sinusoidal", same, 8), reference)
    np.testing.assert_array_equal(encode("sinusoidal", 2.5, 8), reference[2:3])  # one position
    assert math.isclose(analysis.embedding_norm(4, 2), 4.0)
    assert sample_axis(np.float32(0), np.int64(9), 10, 10) == AxisSample(0, 1, 10)
