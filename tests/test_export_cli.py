"""``posenc-gui export``, run as a script would (subprocess, no display)."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import QByteArray
from PySide6.QtGui import QImage

from posenc_gui.model import encode, pairwise
from posenc_gui.views import panel_classes


def run(*args, env=None, timeout=180):
    base = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return subprocess.run([sys.executable, "-m", "posenc_gui", "export", *args], capture_output=True, text=True,
                          timeout=timeout, env={**base, **(env or {})})


def one_line_error(result, code):
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("posenc-gui export: error: ")
    return lines[0]


def test_list_names_every_panel():
    result = run("--list")
    assert result.returncode == 0, result.stderr
    listed = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    assert listed == [cls.panel_id for cls in panel_classes()]
    assert result.stderr == ""


def test_help_shows_parameter_and_panel_flags():
    result = run("--help")
    assert result.returncode == 0
    for flag in ("--seq-len", "--d-model", "--width", "--sentence-a", "--sentence-b", "--metric", "--dims"):
        assert flag in result.stdout, flag


def test_png_without_a_display_has_the_requested_width(tmp_path):
    out = tmp_path / "heat.png"
    result = run("heatmap", "-o", str(out), "--seq-len", "64", "--d-model", "48", "--width", "1234")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert str(out) in result.stdout
    image = QImage.fromData(QByteArray(out.read_bytes()), "PNG")
    assert image.width() == 1234
    gray = np.array([[image.pixelColor(x, y).lightness() for x in range(0, 1234, 37)]
                     for y in range(0, image.height(), 37)])
    assert gray.std() > 10  # not blank


def test_vector_and_data_formats_from_the_command_line(tmp_path):
    flags = ["--scheme", "harmonic", "--seq-len", "50", "--d-model", "12"]
    expected = encode("harmonic", np.arange(50.0), 12)
    for fmt in ("svg", "pdf", "npy", "csv", "json"):
        out = tmp_path / f"h.{fmt}"
        result = run("heatmap", "-o", str(out), *flags)
        assert result.returncode == 0, (fmt, result.stderr)
        if fmt == "svg":
            root = ET.fromstring(out.read_bytes())
            assert any(True for _ in root.iter("{http://www.w3.org/2000/svg}image"))
        elif fmt == "pdf":
            assert out.read_bytes().startswith(b"%PDF")
        elif fmt == "npy":
            np.testing.assert_array_equal(np.load(out), expected)
        elif fmt == "csv":
            np.testing.assert_array_equal(np.loadtxt(out, delimiter=","), expected)
        else:
            doc = json.loads(out.read_text())
            assert doc["params"]["scheme"] == "harmonic"
            np.testing.assert_array_equal(np.array(doc["arrays"]["encoding"]["data"]), expected)


def test_panel_options_reach_the_panel(tmp_path):
    out = tmp_path / "sim.npy"
    result = run("similarity", "-o", str(out), "--seq-len", "30", "--d-model", "8", "--metric", "cosine",
                 "--reference", "4")
    assert result.returncode == 0, result.stderr
    pe = encode("sinusoidal", np.arange(30.0), 8, base=10000.0, layout="interleaved")
    np.testing.assert_array_equal(np.load(out), pairwise(pe, pe, "cosine"))
    result = run("similarity", "-o", str(tmp_path / "sim.json"), "--seq-len", "30", "--d-model", "8",
                 "--metric", "cosine", "--reference", "4")
    assert result.returncode == 0, result.stderr
    meta = json.loads((tmp_path / "sim.json").read_text())["meta"]
    assert meta["metric"] == "cosine" and meta["reference"] == 4

    waves = tmp_path / "w.npy"
    result = run("waveforms", "-o", str(waves), "--d-model", "16", "--dims", "0,3,5-6")
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(waves), encode("sinusoidal", np.arange(128.0), 16,
                                                         dims=np.array([0, 3, 5, 6]), base=10000.0,
                                                         layout="interleaved"))


def test_permutation_sentences_from_flags(tmp_path):
    out = tmp_path / "demo.json"
    result = run("permutation", "-o", str(out), "--sentence-a", "the cat sat", "--sentence-b", "sat the cat",
                 "--no-position")
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    doc = json.loads(text)
    assert isinstance(doc, dict)
    assert "the cat sat" in text and "sat the cat" in text
    png = tmp_path / "demo.png"
    assert run("permutation", "-o", str(png), "--sentence-a", "a b", "--sentence-b", "b a").returncode == 0
    assert QImage(str(png)).width() > 0


@pytest.mark.parametrize("args, needle", [
    (["heatmap", "-o", "OUT.png", "--bogus"], "unrecognized arguments: --bogus"),
    (["heatmap", "-o", "OUT.png", "--seq-len", "0"], "seq_len"),
    (["heatmap", "-o", "OUT.png", "--base", "1"], "base"),
    (["heatmap", "-o", "OUT.txt"], "Unknown export format"),
    (["nosuchpanel", "-o", "OUT.png"], "unknown panel"),
    (["heatmap", "-o", "OUT.png", "--metric", "cosine"], "--metric is an option of the similarity panel"),
    (["waveforms", "-o", "OUT.png", "--dims", "999"], "dims"),
    (["heatmap", "-o", "OUT.png", "--width", "3"], "width"),
    (["heatmap", "-o", "OUT.csv", "--width", "300"], "--width"),
    (["heatmap"], "-o FILE"),
    (["permutation", "-o", "OUT.png", "--sentence-a", ""], "sentence"),
])
def test_usage_errors_are_one_line_and_exit_2(tmp_path, args, needle):
    target = tmp_path / "OUT"
    args = [a.replace("OUT", str(target)) for a in args]
    line = one_line_error(run(*args), 2)
    assert needle in line, line
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_failed_export_exits_1_and_keeps_the_existing_file(tmp_path):
    missing = tmp_path / "no" / "such" / "folder" / "x.png"
    line = one_line_error(run("heatmap", "-o", str(missing)), 1)
    assert "does not exist" in line
    existing = tmp_path / "pe.npy"
    existing.write_bytes(b"keep me")
    # past the export limit the heatmap can only give samples, which .npy refuses
    line = one_line_error(run("heatmap", "-o", str(existing), "--seq-len", "1048576", "--d-model", "64"), 1)
    assert "limit" in line
    assert existing.read_bytes() == b"keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pe.npy"]
    folder_target = tmp_path / "a_folder.png"
    folder_target.mkdir()
    assert "folder" in one_line_error(run("heatmap", "-o", str(folder_target)), 1)


def test_an_explicit_platform_is_respected(tmp_path):
    out = tmp_path / "w.svg"
    result = run("waveforms", "-o", str(out), env={"QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr
    ET.fromstring(out.read_bytes())


def test_size_sets_the_figure_layout(tmp_path):
    out = tmp_path / "small.png"
    result = run("waveforms", "-o", str(out), "--size", "500x300", "--scale", "1")
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert abs(image.width() - 500) <= 2 and abs(image.height() - 300) <= 2


def test_a_png_narrower_than_the_default_figure_is_laid_out_at_its_width(tmp_path):
    narrow, laid_out = tmp_path / "narrow.png", tmp_path / "laid_out.png"
    result = run("waveforms", "-o", str(narrow), "--width", "480")
    assert result.returncode == 0, result.stderr
    # the same figure laid out at 480 × 320 and drawn at scale 1: full-size text
    result = run("waveforms", "-o", str(laid_out), "--size", "480x320", "--scale", "1")
    assert result.returncode == 0, result.stderr
    a, b = QImage(str(narrow)), QImage(str(laid_out))
    assert a.width() == 480 and a.size() == b.size()
    # Scaled down from the default 960 px layout, text and lines were half size: thousands of pixels differ.
    differing = sum(a.pixel(x, y) != b.pixel(x, y) for x in range(0, a.width(), 2) for y in range(0, a.height(), 2))
    assert differing < 0.01 * (a.width() // 2) * (a.height() // 2)
