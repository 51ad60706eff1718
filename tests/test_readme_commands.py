"""Every ``posenc-gui …`` command README.md shows runs as written.

The commands are read from the README itself (its ``bash`` blocks and its inline code): the window's are
parsed and checked without opening a window; ``export``'s are run in this process when they write one
file or a session (small figures), and planned (every check, nothing rendered) when they write a batch or a
handout. A README placeholder path (``path/to/…``) stands for a small model folder of the same kind.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from bert_folders import random_folder
from posenc_gui.cli import export as export_cli
from posenc_gui.cli.window import build_parser, prepare_launch
from posenc_gui.cli.plan import build_parser as export_parser
from posenc_gui.cli.plan import plan
from posenc_gui.views import panel_classes

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_commands(text: str) -> list[list[str]]:
    """The arguments of each ``posenc-gui`` command in ``text``: in ``bash`` blocks (each command of a
    ``&&`` chain, comments dropped) and in inline code outside tables; a synopsis with ``…`` is no command."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL):
        lines += [part for line in block.replace("\\\n", " ").splitlines() for part in line.split("&&")]
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    prose = "\n".join(line for line in prose.splitlines() if not line.startswith("|"))  # a table names, no more
    lines += re.findall(r"`([^`\n]*posenc-gui[^`\n]*)`", prose.replace("\n", " "))
    commands = []
    for line in lines:
        words = shlex.split(line, comments=True)
        if words and Path(words[0]).name == "posenc-gui" and "…" not in line:
            commands.append(words[1:])
    return commands


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))
#: What a README placeholder path stands for: a BERT-family folder with its tokenizer and 4 heads.
PLACEHOLDER = "path/to/"


def test_the_readme_s_commands_are_found():
    firsts = {tuple(args[:2]) if args[:1] == ["export"] else ("window",) for args in COMMANDS}
    assert {("window",), ("export", "session"), ("export", "handout"), ("export", "heatmap")} <= firsts
    assert ["--scheme", "nope", "--causal"] == next(args for args in COMMANDS if "causal.png" in args)[-3:]


def _with_placeholders(args: list[str], model: Path) -> list[str]:
    return [str(model) if arg.startswith(PLACEHOLDER) else arg for arg in args]


def test_every_readme_command_runs_as_written(qapp, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("POSENC_GUI_SETTINGS", str(tmp_path / "settings.ini"))
    model = random_folder(tmp_path / "model", hidden=8, heads=4)
    classes = panel_classes()
    commands = [_with_placeholders(args, model) for args in COMMANDS]
    # The session files come first: the other commands open them.
    commands.sort(key=lambda args: args[:2] != ["export", "session"])
    for args in commands:
        shown = shlex.join(["posenc-gui", *args])
        if args[:1] != ["export"]:
            if "--help" in args:
                with pytest.raises(SystemExit) as done:
                    prepare_launch(args)
                assert done.value.code == 0, shown
            else:
                launch = prepare_launch(args)  # parsed and checked; no window opens
                assert launch.args is not None, shown
            continue
        export_args = args[1:]
        if export_args[:1] == ["handout"]:
            _, _, jobs, _ = export_cli.handout_plan(export_args[1:])
            assert jobs, shown
            continue
        if export_args[:1] not in (["session"], ["--list"], ["--help"]):
            checked = plan(export_parser(classes).parse_args(export_args), classes)
            if checked.folder is not None:  # a batch: checked, not rendered
                assert len(checked.jobs) > 1, shown
                continue
        status = export_cli.main(export_args)
        out = capsys.readouterr()
        assert status == 0, (shown, out.err)
        assert out.err == "", shown
        if "-o" in export_args:
            written = Path(export_args[export_args.index("-o") + 1])
            assert written.is_file() and written.stat().st_size > 0, shown


def _flags(parser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def test_every_flag_the_readme_names_is_the_app_s_and_the_tour_s_are_the_window_s():
    text = README.read_text(encoding="utf-8")
    window = _flags(build_parser())
    export = _flags(export_parser(panel_classes()))
    app = text[:text.index("## Performance")]  # the benchmark's and the monkey test's flags are theirs
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", app))
    handout = {"--page"}  # the handout's own flag: its command line takes it
    assert export_cli.handout_plan(["-o", "lesson.pdf", "--page", "letter"])[0].page == "letter"
    assert named - window - export - handout == set()
    tour = text[text.index("## A tour"):text.index("## Export")]
    in_tour = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", tour))
    assert {"--causal", "--real-head", "--compare"} <= in_tour
    assert in_tour - window == set()
