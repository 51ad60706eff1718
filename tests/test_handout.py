"""Handouts: several figures with the parameters and headline numbers, as one PDF or a folder with an index page."""

import json
import re

import pytest
from PySide6.QtGui import QImage

from posenc_gui.cli import export as export_cli
from posenc_gui.model import EncodingParams
from posenc_gui.views.handout_ui import HandoutDialog, default_panels, export_handout
from posenc_gui.views.registry import panel_classes
from waiting import TIMEOUT_MS



def pdf_pages(data: bytes) -> list[tuple[float, float]]:
    """The (width, height) in points of each page of a PDF Qt wrote (its pages are objects with a /MediaBox)."""
    pages = re.findall(rb"/Type\s*/Page\b(?!s).*?/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*\]",
                       data, flags=re.DOTALL)
    return [(float(x1) - float(x0), float(y1) - float(y0)) for x0, y0, x1, y1 in pages]


def test_a_pdf_handout_has_a_title_page_and_a_page_per_figure(tmp_path, qapp, capsys):
    out = tmp_path / "lesson.pdf"
    assert export_cli.main(["handout", "-o", str(out), "heatmap", "similarity", "spectrum", "--d-model", "64"]) == 0
    data = out.read_bytes()
    assert data.startswith(b"%PDF")
    pages = pdf_pages(data)
    assert len(pages) == 4  # title page + three figures
    # every page landscape A4 (297 × 210 mm = 841.9 × 595.3 pt; Qt rounds to whole points)
    assert all(abs(width - 842) <= 1 and abs(height - 595) <= 1 for width, height in pages), pages
    assert "(3 figures)" in capsys.readouterr().out


def test_a_letter_handout_has_every_page_landscape_letter(tmp_path, qapp):
    out = tmp_path / "letter.pdf"
    # a tall figure, a square one and a wide one: each page the same paper all the same
    assert export_cli.main(["handout", "-o", str(out), "--page", "letter", "permutation", "similarity",
                            "scorecard", "--d-model", "32"]) == 0
    pages = pdf_pages(out.read_bytes())
    assert len(pages) == 4
    assert all(abs(width - 792) <= 1 and abs(height - 612) <= 1 for width, height in pages), pages


def test_the_default_handout_takes_every_panel_that_shows_the_scheme(tmp_path, qapp):
    out = tmp_path / "all"
    assert export_cli.main(["handout", "-o", f"{out}/", "--scheme", "alibi", "--seq-len", "64"]) == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    expected = [cls for cls in panel_classes() if cls.in_handout and cls.shows(EncodingParams().replaced(
        scheme="alibi").info)]
    assert expected and "Heatmap" not in [cls.title for cls in expected]  # ALiBi gives no table
    for number, cls in enumerate(expected, start=1):
        name = f"{number:02d}_{cls.panel_id}.png"
        assert f"<img src='{name}'" in index
        image = QImage(str(out / name))
        assert not image.isNull() and image.width() > 100
    assert "alibi" in index and "Attention bias" in index


def test_a_folder_handout_lists_each_figure_with_its_caption_and_headline(tmp_path, qapp):
    out = tmp_path / "handout"
    assert export_cli.main(["handout", "-o", f"{out}/", "--format", "png,svg", "magnitude", "uniqueness",
                            "--d-model", "32"]) == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    assert index.index("1. Magnitude") < index.index("2. Uniqueness")
    assert (out / "01_magnitude.svg").read_bytes().lstrip().startswith((b"<?xml", b"<svg"))
    assert "d_model 32" in index  # the parameters
    figure = re.search(r"<figure id='magnitude'>(.*?)</figure>", index, re.DOTALL).group(1)
    said = " ".join(re.findall(r"<p class='(?:caption|headline)'>(.*?)</p>", figure, re.DOTALL))
    assert "‖" in said  # the panel's summary line: norms
    assert figure.count(said[:40]) == 1, "the summary line is printed twice (caption and headline)"


class _Summarised:
    """A panel whose summary line is ``line``."""

    def __init__(self, line: str) -> None:
        self.line = line

    def headline(self) -> str:
        return self.line


def test_a_headline_the_caption_already_gives_is_not_printed_again():
    from posenc_gui.export.handout import headline_of

    summary = "64 rotary pairs;  wavelengths from 6.283\nto 2.047e+07 positions."
    assert headline_of(_Summarised(summary), "Values from −1 to 1. " + " ".join(summary.split())) == ""
    assert headline_of(_Summarised(summary), "Values from −1 to 1.") == summary
    assert headline_of(_Summarised(summary)) == summary


@pytest.mark.parametrize("argv, message", [
    (["handout", "-o", "x.pdf", "--format", "png"], "--format chooses a handout folder's"),
    (["handout", "heatmap"], "give the handout's file"),
    (["handout", "-o", "x.pdf", "--d-model", "32,64"], "a handout shows one setup"),
    (["handout", "-o", "x.pdf", "nonsense"], "unknown panel"),
    (["handout", "-o", "x.pdf", "--page", "a3"], "--page"),
    (["handout", "-o", "x/", "--page", "letter"], "--page chooses a PDF handout's paper"),
])
def test_a_bad_handout_command_is_one_line_and_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert export_cli.main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and "\n" not in error
    assert not (tmp_path / "x.pdf").exists()


def test_a_handout_past_the_memory_budget_is_refused_and_keeps_the_existing_file(capsys, tmp_path):
    existing = tmp_path / "lesson.pdf"
    existing.write_bytes(b"keep me")
    assert export_cli.main(["handout", "-o", str(existing), "heatmap", "--size", "8000x8000"]) == 2
    error = capsys.readouterr().err.strip()
    assert "16,777,216" in error and "memory" in error and "\n" not in error
    assert existing.read_bytes() == b"keep me"


@pytest.fixture
def compared_session(tmp_path):
    """A session file comparing A (sinusoidal, d_model 64, interleaved) with B (the same, halves) as B − A."""
    params = EncodingParams().replaced(d_model=64)
    session = tmp_path / "s.json"
    session.write_text(json.dumps({"format": "posenc-gui session", "version": 2,
                                   "params": params.replaced(layout="halves").as_dict(),
                                   "compare": {"a": params.as_dict(), "mode": "difference"}}), encoding="utf-8")
    return session


def test_a_session_handout_shows_a_and_b(tmp_path, qapp, compared_session):
    session = compared_session
    out = tmp_path / "ab"
    assert export_cli.main(["handout", "-o", f"{out}/", "--session", str(session), "heatmap"]) == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "A (pinned): sinusoidal" in index and "B: sinusoidal" in index and "halves" in index
    image = QImage(str(out / "01_heatmap.png"))
    assert image.width() > 2 * image.height()  # A, B and B − A side by side


def test_the_window_exports_a_handout_of_the_shown_panels(make_window, qtbot, tmp_path, monkeypatch):
    window = make_window(size=(1500, 950), params=EncodingParams().replaced(d_model=64), restore=False)
    shown = default_panels(window)
    assert "heatmap" in shown and "walkthrough" not in shown and "parameters" not in shown
    dialog = HandoutDialog(window)
    assert dialog.chosen() == shown
    assert dialog.page_box.currentData() == "a4" and dialog.page_box.findData("letter") >= 0
    dialog.form_box.setCurrentIndex(dialog.form_box.findData("png"))
    assert not dialog.page_box.isEnabled()  # a folder has no pages
    target = tmp_path / "window.pdf"
    written = export_handout(window, str(target), ["heatmap", "waveforms"], page="letter")
    pages = pdf_pages(target.read_bytes())
    assert written == target and len(pages) == 3
    assert all(abs(width - 792) <= 1 and abs(height - 612) <= 1 for width, height in pages), pages
    errors = []
    monkeypatch.setattr("posenc_gui.views.handout_ui.show_error", lambda parent, message: errors.append(message))
    assert export_handout(window, str(tmp_path / "missing" / "x.pdf"), ["heatmap"]) is None
    assert errors and "missing" in errors[0]


def test_a_dark_handout_of_a_comparison_is_dark_on_every_page(tmp_path, qapp, compared_session):
    session = compared_session
    out = tmp_path / "dark"
    assert export_cli.main(["handout", "-o", f"{out}/", "--session", str(session), "--theme", "dark",
                            "logits", "scorecard"]) == 0
    from posenc_gui.views.plotkit.theme import theme_named

    dark = theme_named("dark")
    index = (out / "index.html").read_text(encoding="utf-8")
    assert f"background:{dark.background}" in index
    for name in ("01_logits.png", "02_scorecard.png"):
        image = QImage(str(out / name))
        # the panels' own backgrounds (not only their canvases) are dark: sample a row of pixels near the top
        light = sum(image.pixelColor(x, 4).lightness() > 200 for x in range(0, image.width(), 8))
        assert light < image.width() / 8 / 10, name


def test_the_window_s_handout_takes_its_own_theme_and_leaves_the_window_s(make_window, tmp_path):
    from posenc_gui.views.plotkit import theme

    window = make_window(size=(1500, 950), params=EncodingParams().replaced(d_model=64), restore=False)
    dialog = HandoutDialog(window)
    assert dialog.theme_box.currentData() == theme.current().name == "light"
    written = export_handout(window, f"{tmp_path}/dark/", ["heatmap"], "png", "dark")
    assert written is not None and theme.current().name == "light"
    image = QImage(str(tmp_path / "dark" / "01_heatmap.png"))
    corner = image.pixelColor(2, 2)
    assert corner.name() == theme.theme_named("dark").background  # the figure's background, not the window's
    assert window.panels["heatmap"].canvas.backgroundBrush().color().lightness() > 200  # the window: light still
