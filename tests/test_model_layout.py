"""The model's layers are folders a reader of the tree sees at once (#38 item 4), behind the same façade."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import posenc_gui.model
from waiting import TIMEOUT_S

MODEL = Path(posenc_gui.model.__file__).parent

#: Each concept's folder and the modules it holds (the plan of #38).
LAYOUT = {
    "core": {"specs", "limits", "params", "cache", "sampling", "coverage", "digits", "colour_bound"},
    "files": {"model_file", "gguf_file", "json_nesting", "config_rope", "model_setup", "model_tables", "locations"},
    "attention": {"embeddings", "head", "split", "ordering", "permutation", "logits", "logit_checks",
                  "logit_properties", "logit_scan", "bert_head"},
    "analyses": {"analysis", "addition", "closest", "closest_general", "offset_scan", "linear_relation", "similarity",
                 "spectrum", "table_spectra", "scorecard", "measured", "compare"},
    "panels": {"panel_data", "table_data"},
    "rope": {"config", "context", "data", "precision"},
    "bias": {"_common", "alibi", "t5", "xpos", "learned", "data"},
}


#: What ``posenc_gui.model`` exported before it had folders (the façade keeps every name), and what it has
#: exported since: ``default_d_model`` (#39: RoPE's and xPos's d_model is a head dimension, 128 unless set).
FACADE_NAMES = {
    "AxisSample", "aliased", "curve_positions", "sample_axis", "value_range", "OPTION_SPECS", "Columns", "Options",
    "ParamSpec", "Preset", "Scheme", "presets", "find_preset", "register", "unregister", "scheme", "METRICS",
    "SCHEMES", "EncodingParams", "clear_caches", "columns", "encode", "formula_term", "limits", "offset_profile",
    "pairwise", "similarity_matrix", "wavelengths", "AttentionTrace", "LogitSplit", "OrderingComparison",
    "PermutationDemo", "align_permutation", "logit_split", "permutation_demo", "permutation_dict", "self_attention",
    "tokenize", "RopeBands", "RopeConfig", "rope_angles", "rope_bands", "rope_config", "rope_decay_bound",
    "rope_frequencies", "rope_pairs", "rope_rotate", "alibi_bias", "alibi_slopes", "learned_table", "learned_values",
    "t5_bias", "t5_random_table", "t5_relative_bucket", "xpos_centered_positions", "xpos_scale", "xpos_zeta",
    "ModelFile", "ModelFileError", "open_model", "Decoder", "DecoderTrace", "PairContributions", "TraceCancelled",
    "open_decoder", "pair_contributions", "default_d_model",
}


def _public_names(path: Path) -> set[str]:
    """The names a module defines at its top level (functions, classes, constants) that do not start with ``_``."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


def test_no_module_lies_directly_in_model_but_the_facade():
    flat = {path.name for path in MODEL.glob("*.py")} - {"__init__.py"}
    assert not flat, f"put these in the folder of their concept: {sorted(flat)}"


@pytest.mark.parametrize("folder", sorted(LAYOUT))
def test_each_concept_is_a_folder_holding_its_modules(folder):
    package = importlib.import_module(f"posenc_gui.model.{folder}")
    assert Path(package.__file__).parent == MODEL / folder
    modules = {path.stem for path in (MODEL / folder).glob("*.py")} - {"__init__"}
    assert LAYOUT[folder] <= modules, f"missing from {folder}/: {sorted(LAYOUT[folder] - modules)}"
    for name in LAYOUT[folder]:
        importlib.import_module(f"posenc_gui.model.{folder}.{name}")


def test_the_facade_exports_the_same_names():
    assert set(posenc_gui.model.__all__) == FACADE_NAMES
    for name in FACADE_NAMES:
        assert getattr(posenc_gui.model, name) is not None


@pytest.mark.parametrize(("package", "modules"), [
    ("files", ("model_file",)),
    ("attention", ("embeddings", "head", "split", "ordering", "permutation")),  # the toy head
])
def test_a_package_named_like_its_old_module_re_exports_its_public_names(package, modules):
    # ``from posenc_gui.model.files import open_model`` and ``posenc_gui.model.attention.permutation_demo``
    # read as before the model had folders
    imported_package = importlib.import_module(f"posenc_gui.model.{package}")
    exported = set()
    for module in modules:
        imported_module = importlib.import_module(f"posenc_gui.model.{package}.{module}")
        names = _public_names(MODEL / package / f"{module}.py")
        assert names, module
        missing = {name for name in names
                   if getattr(imported_package, name, None) is not getattr(imported_module, name)}
        assert not missing, f"posenc_gui.model.{package} does not re-export {sorted(missing)} of {module}"
        exported |= names
    assert set(imported_package.__all__) == exported


def test_importing_the_model_leaves_the_analyses_panel_data_attention_and_decoder_unloaded():
    # they load with the panels that use them (the façade's attention names on first use); the façade needs
    # only the similarity measures
    code = ("import sys, posenc_gui.model;"
            "print(' '.join(sorted(k for k in sys.modules if k.startswith('posenc_gui.model.'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    loaded = set(result.stdout.split())
    assert "posenc_gui.model.core.limits" in loaded  # the listing works
    lazy = {name for name in loaded
            if name.startswith(("posenc_gui.model.decoder", "posenc_gui.model.panels.", "posenc_gui.model.attention"))
            or (name.startswith("posenc_gui.model.analyses.") and name != "posenc_gui.model.analyses.similarity")}
    assert not lazy, f"imported before first use: {sorted(lazy)}"
