"""``posenc-gui export``: its command line, in this process (``export_cli.main``) where a child process proves
nothing more, and as a script runs it (a child process, no display) for what only a process shows."""

import contextlib
import io
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QByteArray
from PySide6.QtGui import QImage

from bert_folders import PANICS, hand_folder, write_panicking_tokenizer
from posenc_gui.cli import export as export_cli
from posenc_gui.export import suggested_name
from posenc_gui.model import EncodingParams, encode, pairwise
from posenc_gui.views import panel_classes
from waiting import TIMEOUT_S, finish_pending, geometry


#: Every test here may run the command in this process: it uses the tests' application.
pytestmark = pytest.mark.usefixtures("qapp")


def run(*args, env=None, timeout=TIMEOUT_S):
    """``python -m posenc_gui export ARGS`` in a child process with no display (``env`` added)."""
    base = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return subprocess.run([sys.executable, "-m", "posenc_gui", "export", *args], capture_output=True, text=True,
                          timeout=timeout, env={**base, **(env or {})})


def run_here(*args) -> subprocess.CompletedProcess:
    """``posenc-gui export ARGS`` in this process: its exit status and what it printed, as :func:`run` gives them.

    The command is ``export_cli.main``, which ``python -m posenc_gui export``
    calls; a child process would start Python and Qt again (about 2 s) for
    the same files and lines. What only a process shows (no display, the
    platform it picks, stderr holding nothing but the error line) is tested
    with :func:`run`.
    """
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = export_cli.main(list(args))
    return subprocess.CompletedProcess(["posenc-gui", "export", *args], status, out.getvalue(), err.getvalue())


def one_line_error(result, code):
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("posenc-gui export: error: ")
    return lines[0]


def test_list_names_every_panel():
    result = run_here("--list")
    assert result.returncode == 0, result.stderr
    listed = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    assert listed == [cls.panel_id for cls in panel_classes()]
    assert result.stderr == ""


def test_help_shows_parameter_and_panel_flags():
    result = run_here("--help")
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
        result = run_here("heatmap", "-o", str(out), *flags)
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
    result = run_here("similarity", "-o", str(out), "--seq-len", "30", "--d-model", "8", "--metric", "cosine",
                 "--reference", "4")
    assert result.returncode == 0, result.stderr
    pe = encode("sinusoidal", np.arange(30.0), 8, base=10000.0, layout="interleaved")
    np.testing.assert_array_equal(np.load(out), pairwise(pe, pe, "cosine"))
    result = run_here("similarity", "-o", str(tmp_path / "sim.json"), "--seq-len", "30", "--d-model", "8",
                 "--metric", "cosine", "--reference", "4")
    assert result.returncode == 0, result.stderr
    meta = json.loads((tmp_path / "sim.json").read_text())["meta"]
    assert meta["metric"] == "cosine" and meta["reference"] == 4

    waves = tmp_path / "w.npy"
    result = run_here("waveforms", "-o", str(waves), "--d-model", "16", "--dims", "0,3,5-6")
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(waves), encode("sinusoidal", np.arange(128.0), 16,
                                                         dims=np.array([0, 3, 5, 6]), base=10000.0,
                                                         layout="interleaved"))


def test_permutation_sentences_from_flags(tmp_path):
    out = tmp_path / "demo.json"
    result = run_here("permutation", "-o", str(out), "--sentence-a", "the cat sat", "--sentence-b", "sat the cat",
                 "--no-position")
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    doc = json.loads(text)
    assert isinstance(doc, dict)
    assert "the cat sat" in text and "sat the cat" in text
    png = tmp_path / "demo.png"
    assert run_here("permutation", "-o", str(png), "--sentence-a", "a b", "--sentence-b", "b a").returncode == 0
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
    line = one_line_error(run_here(*args), 2)
    assert needle in line, line
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("panic", PANICS)
def test_a_tokenizer_that_makes_the_package_panic_is_one_line_naming_it_and_exit_2(tmp_path, panic):
    path = write_panicking_tokenizer(hand_folder(tmp_path / "tiny-bert", special=True), panic)
    target = tmp_path / "demo.png"
    line = one_line_error(run("permutation", "--model", str(path.parent), "--real-head", "0", "-o", str(target)), 2)
    assert str(path) in line and "the tokenizers package failed on it" in line, line
    assert not target.exists()


@pytest.mark.parametrize("args, limit", [
    (["--size", "8000x8000"], "16,777,216"),  # 64 million logical pixels: 3.2–3.8 GB to export before
    (["--width", "16384"], "67,108,864"),  # 16,384 × 10,923 at the default 960 × 640 figure
])
def test_a_figure_past_the_memory_budget_is_one_line_exit_2_and_keeps_the_existing_file(tmp_path, args, limit):
    existing = tmp_path / "big.png"
    existing.write_bytes(b"keep me")
    line = one_line_error(run("heatmap", "-o", str(existing), *args), 2)
    assert limit in line and "memory" in line, line
    assert existing.read_bytes() == b"keep me"


def test_failed_export_exits_1_and_keeps_the_existing_file(tmp_path):
    missing = tmp_path / "no" / "such" / "folder" / "x.png"
    line = one_line_error(run_here("heatmap", "-o", str(missing)), 1)
    assert "does not exist" in line
    existing = tmp_path / "pe.npy"
    existing.write_bytes(b"keep me")
    # past the export limit the heatmap can only give samples, which .npy refuses
    line = one_line_error(run_here("heatmap", "-o", str(existing), "--seq-len", "1048576", "--d-model", "64"), 1)
    assert "limit" in line
    assert existing.read_bytes() == b"keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pe.npy"]
    folder_target = tmp_path / "a_folder.png"
    folder_target.mkdir()
    assert "folder" in one_line_error(run_here("heatmap", "-o", str(folder_target)), 1)


def test_an_explicit_platform_is_respected(tmp_path):
    out = tmp_path / "w.svg"
    result = run("waveforms", "-o", str(out), env={"QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr
    ET.fromstring(out.read_bytes())


def test_size_sets_the_figure_layout(tmp_path):
    out, taller = tmp_path / "small.png", tmp_path / "taller.png"
    result = run_here("waveforms", "-o", str(out), "--size", "500x300", "--scale", "1")
    assert result.returncode == 0, result.stderr
    result = run_here("waveforms", "-o", str(taller), "--size", "500x400", "--scale", "1")
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    # the figure is 500 × 300 and its caption (the same at the same width) runs under it
    assert abs(image.width() - 500) <= 2 and 300 <= image.height() <= 300 + 100
    assert QImage(str(taller)).height() - image.height() == 100


def test_a_png_narrower_than_the_default_figure_is_laid_out_at_its_width(tmp_path):
    narrow, laid_out = tmp_path / "narrow.png", tmp_path / "laid_out.png"
    result = run_here("waveforms", "-o", str(narrow), "--width", "480")
    assert result.returncode == 0, result.stderr
    # the same figure laid out at 480 × 320 and drawn at scale 1: full-size text
    result = run_here("waveforms", "-o", str(laid_out), "--size", "480x320", "--scale", "1")
    assert result.returncode == 0, result.stderr
    a, b = QImage(str(narrow)), QImage(str(laid_out))
    assert a.width() == 480 and a.size() == b.size()
    # Scaled down from the default 960 px layout, text and lines were half size: thousands of pixels differ.
    differing = sum(a.pixel(x, y) != b.pixel(x, y) for x in range(0, a.width(), 2) for y in range(0, a.height(), 2))
    assert differing < 0.01 * (a.width() // 2) * (a.height() // 2)


# ------------------------------------------------------------------- batch
def written_paths(result):
    """The paths a batch printed, one a line."""
    return [line for line in result.stdout.splitlines() if line.strip()]


def test_a_batch_of_panels_and_formats_writes_each_file_with_its_suggested_name(tmp_path):
    folder = tmp_path / "figures"
    result = run_here("heatmap", "similarity", "waveforms", "-o", f"{folder}/", "--format", "png,svg",
                 "--seq-len", "40", "--d-model", "16")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    params = EncodingParams(seq_len=40, d_model=16)
    expected = [folder / suggested_name(params, panel, fmt)
                for panel in ("heatmap", "similarity", "waveforms") for fmt in ("png", "svg")]
    assert written_paths(result) == [str(path) for path in expected]  # one line per file, in order
    assert sorted(folder.iterdir()) == sorted(expected)
    for path in expected:
        if path.suffix == ".png":
            assert QImage(str(path)).width() == 1920
        else:
            ET.fromstring(path.read_bytes())


def test_a_parameter_list_writes_a_file_for_each_value(tmp_path):
    result = run_here("heatmap", "-o", str(tmp_path), "--d-model", "8,12,6", "--format", "npy", "--seq-len", "30")
    assert result.returncode == 0, result.stderr
    for d_model, line in zip((8, 12, 6), written_paths(result), strict=True):
        path = tmp_path / suggested_name(EncodingParams(seq_len=30, d_model=d_model), "heatmap", "npy")
        assert line == str(path)
        np.testing.assert_array_equal(np.load(path), encode("sinusoidal", np.arange(30.0), d_model, base=10000.0))
    result = run_here("magnitude", "-o", f"{tmp_path}/", "--scheme", "sinusoidal,harmonic", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert [json.loads(Path(line).read_text())["params"]["scheme"] for line in written_paths(result)] == [
        "sinusoidal", "harmonic"]


def test_a_batch_file_is_the_file_the_single_form_writes(tmp_path):
    args = ["--seq-len", "64", "--d-model", "24", "--metric", "cosine"]
    result = run_here("heatmap", "similarity", "-o", f"{tmp_path}/batch/", "--format", "png,svg", *args)
    assert result.returncode == 0, result.stderr
    for line in written_paths(result):
        batch = Path(line)
        single = tmp_path / batch.name
        panel = batch.stem.rsplit("_", 1)[1]
        assert run_here(panel, "-o", str(single), *(args if panel == "similarity" else args[:4])).returncode == 0
        assert batch.read_bytes() == single.read_bytes(), batch.name


@pytest.mark.parametrize("args, needle", [
    (["heatmap", "nosuchpanel", "-o", "DIR/"], "unknown panel 'nosuchpanel'"),
    (["heatmap", "-o", "DIR/", "--format", "png,gif"], "invalid choice 'gif'"),
    (["heatmap", "-o", "DIR/", "--format", "png,,svg"], "empty value"),
    (["heatmap", "-o", "DIR/", "--d-model", "64,0"], "d_model"),
    (["heatmap", "-o", "DIR/", "--d-model", "64,x"], "d_model must be an integer 2…8192, got 'x'"),
    (["heatmap", "-o", "DIR/", "--scheme", "sinusoidal,bogus"], "--scheme: scheme must be one of naive,"),
    (["heatmap", "-o", "DIR/", "--d-model", "64,128", "--seq-len", "8,16"], "one parameter at a time"),
    (["heatmap", "-o", "DIR/", "--d-model", "64,64"], "two files would be named"),
    (["heatmap", "heatmap", "-o", "DIR/"], "two files would be named"),
    (["heatmap", "similarity", "-o", "DIR.png"], "names a file"),
    (["heatmap", "-o", "DIR/", "--format", "svg", "--width", "800"], "--width and --scale apply to .png"),
    (["heatmap", "waveforms", "-o", "DIR/", "--metric", "cosine"], "--metric is an option of the similarity"),
    # right for d_model 32, wrong for 8: found before the first file is written
    (["heatmap", "waveforms", "-o", "DIR/", "--d-model", "32,8", "--dims", "0,20"], "dims"),
])
def test_bad_batch_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, needle):
    args = [a.replace("DIR", str(tmp_path / "out")) for a in args]
    line = one_line_error(run_here(*args), 2)
    assert needle in line, line
    assert list(tmp_path.iterdir()) == []  # not even the folder


def test_a_failed_file_is_named_and_the_batch_goes_on(tmp_path):
    # Past the export limit the heatmap has only samples, which .npy refuses; the figures are still written.
    result = run("heatmap", "-o", f"{tmp_path}/", "--format", "npy,png,svg", "--seq-len", "1048576",
                 "--d-model", "64")
    assert result.returncode == 1, result.stderr
    params = EncodingParams(seq_len=1048576, d_model=64)
    refused = tmp_path / suggested_name(params, "heatmap", "npy")
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"posenc-gui export: error: {refused}: ") and "limit" in line
    written = [tmp_path / suggested_name(params, "heatmap", fmt) for fmt in ("png", "svg")]
    assert written_paths(result) == [str(path) for path in written]
    assert sorted(tmp_path.iterdir()) == sorted(written)


def test_a_batch_folder_is_created_but_not_its_parents(tmp_path):
    result = run_here("heatmap", "-o", f"{tmp_path}/new/", "--seq-len", "8", "--d-model", "4")
    assert result.returncode == 0, result.stderr
    assert [p.name for p in (tmp_path / "new").iterdir()] == ["sinusoidal_n8_d4_b10000_heatmap.png"]
    line = one_line_error(run_here("heatmap", "-o", f"{tmp_path}/no/such/", "--seq-len", "8"), 1)
    assert "Cannot create the folder" in line
    assert not (tmp_path / "no").exists()


def test_help_describes_batch_export():
    text = " ".join(run_here("--help").stdout.split())
    for needle in ("PANEL [PANEL ...]", "--format", "-o FILE|DIR/", "--d-model N[,N…]", "comma list"):
        assert needle in text, needle


# ----------------------------------------------------------------- waiting
def _export_in_process(args, capsys):
    """Run ``posenc-gui export`` in this process; the lines it printed (the paths of a batch)."""
    status = export_cli.main(args)
    out = capsys.readouterr()
    assert status == 0, out.err
    return [Path(line) for line in out.out.splitlines()]


def test_export_waits_for_events_not_for_time(qapp, tmp_path, monkeypatch, capsys):
    """No fixed sleep: the heatmap computes at once, the spectrum in a worker thread whose result export waits for."""
    def no_sleep(seconds):
        raise AssertionError(f"time.sleep({seconds}) while exporting")

    monkeypatch.setattr(time, "sleep", no_sleep)
    for panel in ("heatmap", "spectrum"):
        path = tmp_path / f"{panel}.png"
        assert _export_in_process([panel, "-o", str(path), "--seq-len", "256", "--d-model", "32"], capsys)
        image = QImage(str(path))
        gray = np.array([[image.pixelColor(x, y).lightness() for x in range(0, image.width(), 40)]
                         for y in range(0, image.height(), 40)])
        assert gray.std() > 10, panel  # drawn, not blank


def test_an_export_shows_what_the_panel_shows_after_any_wait(qtbot, tmp_path, monkeypatch, capsys):
    """The figure is written once drawn: waiting and painting longer at every step changes no byte.

    At 4,096 × 1,024 the heatmap and the similarity matrix compute in
    worker threads and re-sample once the figure has its final size; the
    relative panel's axes move on its first paint.
    """
    args = ["heatmap", "similarity", "waveforms", "relative", "--seq-len", "4096", "--d-model", "1024",
            "--format", "png,svg"]
    prompt = _export_in_process([*args, "-o", f"{tmp_path}/prompt/"], capsys)
    from posenc_gui.export import readiness

    settle, until_drawn = readiness.settle, readiness.until_drawn

    def patient_settle(panel, deadline=None):
        finish_pending(qtbot, panel)  # the panel's timers, events and a paint, until nothing moves
        settle(panel, deadline)

    def patient_until_drawn(panel):
        until_drawn(panel)
        finish_pending(qtbot, panel)

    monkeypatch.setattr(readiness, "settle", patient_settle)
    monkeypatch.setattr(readiness, "until_drawn", patient_until_drawn)
    patient = _export_in_process([*args, "-o", f"{tmp_path}/patient/"], capsys)
    assert [p.name for p in prompt] == [p.name for p in patient] and len(prompt) == 8
    for a, b in zip(prompt, patient):
        assert a.read_bytes() == b.read_bytes(), a.name


@pytest.mark.parametrize("panel_id", ["relative", "addition", "heatmap"])
def test_a_drawn_panel_keeps_its_layout_when_painted_again(qtbot, tmp_path, panel_id):
    """until_drawn paints until a paint moves nothing: pyqtgraph fits an axis to its labels while painting it."""
    from posenc_gui.compute import ComputeService

    classes = panel_classes()
    args = export_cli.build_parser(classes).parse_args([panel_id, "-o", str(tmp_path / "figure.png")])
    checked = export_cli.plan(args, classes)
    compute = ComputeService(processes=False)
    try:
        with export_cli._drawn_panel(checked.jobs[0], checked, compute) as panel:
            drawn = geometry(panel)
            finish_pending(qtbot, panel)
            assert geometry(panel) == drawn
    finally:
        compute.shutdown()


def test_a_preset_is_the_start_of_a_session_file_and_of_a_batch(qapp, tmp_path, capsys):
    from posenc_gui.cli.plan import build_parser, plan
    from posenc_gui.session import read_session

    path = tmp_path / "llama.json"
    assert export_cli.main(["session", "-o", str(path), "--preset", "Llama 3.1", "--seq-len", "4096"]) == 0, \
        capsys.readouterr().err
    params = read_session(path).params
    # Llama-3.1-8B's config: rope_theta 500000, llama3 scaling ×8 from 8,192, head dimension 128.
    assert (params.scheme, params.seq_len, params.d_model) == ("rope", 4096, 128)
    assert (params.options["rope_theta"], params.options["rope_type"], params.options["factor"]) == \
        (500000.0, "llama3", 8.0)
    classes = panel_classes()
    args = build_parser(classes).parse_args(["context", "-o", f"{tmp_path}/out/", "--preset", "Llama 3.1",
                                             "--seq-len", "32768,131072"])
    swept = [(job.params.seq_len, job.params.options["rope_type"]) for job in plan(args, classes).jobs]
    assert swept == [(32768, "llama3"), (131072, "llama3")]
    with pytest.raises(export_cli.UsageError, match="--preset or --model, not both"):
        plan(build_parser(classes).parse_args(["context", "-o", "x.png", "--preset", "Llama 2", "--model",
                                               str(tmp_path)]), classes)
