"""Session files: saved from a window, opened in another, read from the command line; hostile files refused."""

import json
import os
import subprocess
import sys

import pytest

from posenc_gui.cli import export as export_cli
from posenc_gui.model import EncodingParams
from posenc_gui.session import (MAX_DEPTH, MAX_FILE_BYTES, SESSION_FORMAT, SESSION_VERSION, Session, SessionError,
                                read_session, session_dict, write_session)
from waiting import TIMEOUT_S

GOOD = {"format": SESSION_FORMAT, "version": SESSION_VERSION,
        "params": {"scheme": "sinusoidal", "seq_len": 256, "d_model": 64, "base": 500.0, "layout": "halves"},
        "remembered": {}, "view": {"reference": 10}, "panels": {"waveforms": {"dims": "0, 3"}}}


def write_json(path, document) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def refused(path) -> str:
    """The one-line reason the session file at ``path`` is not read."""
    with pytest.raises(SessionError) as caught:
        read_session(path)
    message = str(caught.value)
    assert message and "\n" not in message
    return message


def with_changes(**fields):
    document = json.loads(json.dumps(GOOD))
    for dotted, value in fields.items():
        *parents, name = dotted.split("__")
        target = document
        for parent in parents:
            target = target[parent]
        target[name] = value
    return document


# ------------------------------------------------------------------ round trip
def test_a_saved_session_opens_in_a_new_window_as_it_was(make_window, tmp_path):
    window = make_window()
    window.state.update(scheme="binary", bit_values="unsigned")
    window.state.update(scheme="sinusoidal", d_model=64, seq_len=256, base=2000.0, layout="halves")
    window.state.set_view(embedding_scale=2.5, demo_d_model=12, reference=33)
    window.panels["waveforms"].apply_options(dims="1, 4, 9")
    window.panels["similarity"].apply_options(metric="cosine")
    window.panels["permutation"].apply_options(sentence_a="a b c", sentence_b="c b a", position=False, causal=True)
    window.panels["linear_relation"].apply_options(k=7)
    window.docks["heatmap"].close()
    remembered = {name: value for name, value in window.state.remembered.items()
                  if name not in window.state.params.options}
    assert remembered  # binary's option, kept while sinusoidal is shown
    path = tmp_path / "lesson.json"
    assert window.save_session(str(path)) is None

    other = make_window(restore=False)
    assert other.open_session(str(path)) is None
    assert other.state.params == window.state.params
    assert {name: other.state.remembered[name] for name in remembered} == remembered
    assert dict(other.state.view) == {"embedding_scale": 2.5, "demo_d_model": 12, "reference": 33}
    assert other.panels["waveforms"].dims == (1, 4, 9)
    assert other.panels["similarity"].metric == "cosine"
    assert other.panels["permutation"].current_options() == {"sentence_a": "a b c", "sentence_b": "c b a",
                                                            "position": False, "causal": True, "real_head": -1}
    assert other.panels["permutation"].causal_check.isChecked()
    assert other.panels["linear_relation"].current_options() == {"k": 7}
    assert other.docks["heatmap"].isHidden() and not other.docks["waveforms"].isHidden()
    assert str(path) in other.recent_sessions()


def test_the_walkthrough_step_comes_back_and_the_saved_parameters_win_over_the_steps(make_window, tmp_path):
    window = make_window()
    window.panels["walkthrough"].apply_options(step=2)  # naive, 128 positions
    window.state.update(seq_len=300)
    path = tmp_path / "step.json"
    window.save_session(str(path))

    other = make_window(restore=False)
    assert other.open_session(str(path)) is None
    assert other.panels["walkthrough"].current_options() == {"step": 2}
    assert (other.state.params.scheme, other.state.params.seq_len) == ("naive", 300)


def test_a_session_given_to_the_window_at_start_is_applied_under_the_flags(make_window, tmp_path):
    session = read_session(write_json(tmp_path / "s.json", GOOD))
    window = make_window(restore=False, session=session, overrides={"d_model": 32})
    assert window.state.params == EncodingParams.validated(scheme="sinusoidal", seq_len=256, d_model=32,
                                                           base=500.0, layout="halves")
    assert window.state.view["reference"] == 10


def test_open_recent_lists_the_last_sessions_newest_first_at_most_eight(make_window, tmp_path):
    window = make_window()
    paths = [write_json(tmp_path / f"s{index}.json", GOOD) for index in range(10)]
    for path in paths:
        assert window.open_session(path) is None
    window.sessions.fill_recent_menu()
    assert [action.text() for action in window.sessions.recent_menu.actions()] == paths[::-1][:8]


def test_a_damaged_recent_list_in_the_settings_is_an_empty_one(make_window):
    window = make_window()
    for damaged in ("not json", json.dumps({"a": 1}), json.dumps([3, None, "x" * 10_000])):
        window.settings.setValue("recentSessions", damaged)
        assert window.recent_sessions() == []


# ------------------------------------------------------------ refused in the window
def window_snapshot(window):
    return window.state.params, dict(window.state.view), window.panels["waveforms"].dims, bytes(window.saveState())


def test_a_bad_file_changes_nothing_in_the_window_and_says_why_in_one_line(make_window, tmp_path):
    window = make_window()
    before = window_snapshot(window)
    path = write_json(tmp_path / "bad.json", with_changes(params__d_model="64"))
    problem = window.open_session(path)
    assert problem is not None and "params.d_model must be an integer" in problem and "\n" not in problem
    assert window_snapshot(window) == before
    assert window.statusBar().currentMessage() == problem
    assert path not in window.recent_sessions()


def test_a_panel_option_the_panel_refuses_undoes_what_was_applied_before_it(make_window, tmp_path):
    window = make_window()
    before = window_snapshot(window)
    path = write_json(tmp_path / "dims.json", with_changes(panels__waveforms__dims="0, 999"))  # d_model 64
    problem = window.open_session(path)
    assert problem is not None and "panels.waveforms" in problem
    assert window_snapshot(window) == before


# -------------------------------------------------------------- hostile files
def test_a_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"format": "posenc-gui session", "version": 1,', encoding="utf-8")
    assert "it is not JSON" in refused(path)


def test_binary_bytes_are_refused(tmp_path):
    path = tmp_path / "s.json"
    path.write_bytes(bytes(range(256)) * 4)
    assert refused(path) == "it is not UTF-8 text"


@pytest.mark.parametrize("opening, closing", [("[", "]"), ('{"a":', "}")])
def test_a_file_nested_100000_deep_is_refused_before_parsing(tmp_path, opening, closing):
    path = tmp_path / "s.json"
    path.write_text(opening * 100_000 + "1" + closing * 100_000, encoding="utf-8")
    assert refused(path) == f"it is nested 100000 deep; a session file nests at most {MAX_DEPTH} deep"


def test_brackets_inside_text_are_no_nesting(tmp_path):
    path = write_json(tmp_path / "s.json", with_changes(panels__permutation={"sentence_a": "[[[[[[[[[[ {{{{{{{{{{"}))
    assert read_session(path).panels["permutation"]["sentence_a"].startswith("[[[[")


def test_a_10_mb_file_is_refused_without_being_read(tmp_path):
    path = tmp_path / "s.json"
    path.write_bytes(b" " * (10 * 1024 * 1024))

    def not_opened(*args):
        raise AssertionError("the file was opened")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", not_opened)
        assert refused(path) == f"it is larger than {MAX_FILE_BYTES // 2**20} MiB"


@pytest.mark.parametrize("literal, expected", [("1e400", "too large for a float"),
                                               ("-1e400", "too large for a float"),
                                               ("1" + "0" * 1000, "an integer of 1,001 digits"),
                                               ("NaN", "NaN, which is no number"),
                                               ("Infinity", "Infinity, which is no number")])
def test_huge_numbers_and_non_numbers_are_refused(tmp_path, literal, expected):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(GOOD).replace('"base": 500.0', f'"base": {literal}'), encoding="utf-8")
    assert expected in refused(path)


@pytest.mark.parametrize("change, expected", [
    ({"params": [1, 2]}, "params must be an object, got an array"),
    ({"params__scheme": 3}, "params.scheme must be text"),
    ({"params__seq_len": "256"}, "params.seq_len must be an integer, got text"),
    ({"params__d_model": 64.0}, "params.d_model must be an integer, got a number"),
    ({"params__base": True}, "params.base must be a number, got true/false"),
    ({"params__d_model": 0}, "params.d_model: d_model must be in 2…8192, got 0"),
    ({"params__scheme": "rot13"}, "params: scheme must be one of naive,"),
    ({"params__bit_values": "signed"}, "params: bit_values does not apply to scheme 'sinusoidal'"),
    ({"version": "1"}, "version must be a whole number"),
    ({"remembered": {"base": "x"}}, "remembered.base must be a number"),
    ({"view": {"reference": "3"}}, "view.reference must be an integer"),
    ({"view": {"reference": 256}}, "view.reference must be a position, 0…255"),
    ({"panels": {"waveforms": {"dims": 3}}}, "panels.waveforms.dims must be text, got an integer"),
    ({"panels": {"permutation": {"position": 1}}}, "panels.permutation.position must be true or false"),
    ({"panels": {"permutation": {"causal": "yes"}}}, "panels.permutation.causal must be true or false"),
    ({"panels": {"linear_relation": {"k": 1.5}}}, "panels.linear_relation.k must be an integer"),
    ({"panels": {"similarity": {"metric": "manhattan"}}}, "panels.similarity.metric must be one of"),
    ({"panels": {"waveforms": "0,1"}}, "panels.waveforms must be an object, got text"),
    ({"layout": 12}, "layout must be base64 text, got an integer"),
    ({"layout": "not base64!"}, "layout is not base64"),
])
def test_wrong_types_and_values_name_the_field(tmp_path, change, expected):
    assert expected in refused(write_json(tmp_path / "s.json", with_changes(**change)))


@pytest.mark.parametrize("change, expected", [
    ({"extra": 1}, "unknown field 'extra'"),
    ({"params__colour": "red"}, "params: 'colour' is no parameter"),
    ({"remembered": {"colour": 1}}, "remembered: 'colour' is no scheme option"),
    ({"view": {"zoom": 2}}, "view: 'zoom' is no view setting"),
    ({"panels": {"teapot": {}}}, "panels: no panel 'teapot'"),
    ({"panels": {"waveforms": {"colour": "red"}}}, "panels.waveforms: no option 'colour'; it has dims"),
])
def test_unknown_fields_are_refused(tmp_path, change, expected):
    assert expected in refused(write_json(tmp_path / "s.json", with_changes(**change)))


def test_a_json_file_that_is_no_session_is_refused(tmp_path):
    assert "not a posenc-gui session" in refused(write_json(tmp_path / "s.json", {"version": 1}))
    assert "the file must be an object, got an array" in refused(write_json(tmp_path / "t.json", [1]))


def test_a_newer_version_is_refused_naming_both_versions(tmp_path):
    path = write_json(tmp_path / "s.json", with_changes(version=SESSION_VERSION + 1, future={"ab": True}))
    assert refused(path) == (f"session file version {SESSION_VERSION + 1} is newer than this posenc-gui "
                             f"understands ({SESSION_VERSION})")


def test_a_folder_is_refused(tmp_path):
    assert refused(tmp_path) == "it is a folder, not a regular file"


def test_a_missing_file_is_named_so(tmp_path):
    assert refused(tmp_path / "none.json") == "there is no such file"


FIFO_SCRIPT = """
import sys
from posenc_gui.session import SessionError, read_session
try:
    read_session(sys.argv[1])
except SessionError as error:
    print(error)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_is_refused_without_being_opened(tmp_path):
    fifo = tmp_path / "s.json"
    os.mkfifo(fifo)
    # Opening the FIFO for reading would wait for a writer for ever: the timeout only bounds that hang.
    result = subprocess.run([sys.executable, "-I", "-c", FIFO_SCRIPT, str(fifo)], capture_output=True, text=True,
                            timeout=TIMEOUT_S, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "it is a FIFO, not a regular file"


def test_what_is_written_reads_back(tmp_path):
    session = Session(EncodingParams.validated(scheme="four_vector", d_model=32), {"base": 123.0, "bit_values": "unsigned"},
                      {"reference": 3}, {"similarity": {"metric": "distance"}}, b"\x00\xffabc")
    path = write_session(tmp_path / "s.json", session)
    assert read_session(path) == session
    assert json.loads(path.read_text(encoding="utf-8")) == session_dict(session)


# ---------------------------------------------------------------- command line
def run(*args, env_extra=None):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "posenc_gui", *args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, env=env)


@pytest.mark.parametrize("form", [[], ["--session"]])
def test_the_window_opens_a_session_file_given_on_the_command_line_under_the_flags(tmp_path, form):
    path = write_json(tmp_path / "s.json", GOOD)
    result = run(*form, path, "--d-model", "32", "--quit-after-first-paint", "--no-restore",
                 env_extra={"POSENC_GUI_SETTINGS": str(tmp_path / "s.ini")})
    assert result.returncode == 0, result.stderr
    assert "sinusoidal_n256_d32_b500" in result.stdout


@pytest.mark.parametrize("command", [[], ["export", "heatmap", "-o", "out.png"]])
def test_a_bad_session_file_on_the_command_line_is_one_line_and_exit_2(tmp_path, command):
    path = write_json(tmp_path / "s.json", with_changes(version=9))
    result = run(*command, "--session", path, env_extra={"POSENC_GUI_SETTINGS": str(tmp_path / "s.ini")})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].endswith(f"{path}: session file version 9 is newer than this posenc-gui understands ({SESSION_VERSION})")
    assert not (tmp_path / "s.ini").exists() and not (tmp_path / "out.png").exists()


def dims_line(csv_path) -> str:
    return next(line for line in csv_path.read_text(encoding="utf-8").splitlines() if line.startswith("# dims:"))


def test_export_with_a_session_uses_its_parameters_and_panel_options_under_the_flags(qapp, tmp_path, capsys):
    path = write_json(tmp_path / "s.json", GOOD)
    out = tmp_path / "w.csv"
    assert export_cli.main(["waveforms", "--session", path, "-o", str(out)]) == 0
    assert dims_line(out) == "# dims: 0, 3"
    assert "seq_len=256, d_model=64, base=500.0, layout=halves" in out.read_text(encoding="utf-8")
    assert export_cli.main(["waveforms", "--session", path, "--dims", "5", "--d-model", "32", "-o", str(out)]) == 0
    assert dims_line(out) == "# dims: 5"
    assert "d_model=32" in out.read_text(encoding="utf-8")


def test_export_with_a_session_sets_its_view_settings(qapp, tmp_path):
    path = write_json(tmp_path / "s.json", with_changes(view={"reference": 17}))
    out = tmp_path / "sim.json"
    assert export_cli.main(["similarity", "--session", path, "-o", str(out)]) == 0
    assert '"reference": 17' in out.read_text(encoding="utf-8")


def test_export_session_writes_a_session_file_of_the_flags(qapp, tmp_path, capsys):
    out = tmp_path / "lesson.json"
    assert export_cli.main(["session", "-o", str(out), "--scheme", "four_vector", "--d-model", "32"]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}")
    assert read_session(out).params == EncodingParams.validated(scheme="four_vector", d_model=32)


def test_export_session_with_a_bad_flag_is_one_line_and_exit_2(tmp_path):
    result = run("export", "session", "-o", str(tmp_path / "s.json"), "--d-model", "0")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "d_model" in result.stderr
    assert not (tmp_path / "s.json").exists()



def test_a_session_saved_after_the_sequence_got_shorter_than_the_reference_opens_again(make_window, tmp_path):
    # The reference position (64 by default) must stay a position: at N = 8 it moves to the middle, 4,
    # whether or not the Similarity panel was ever built (it used to be kept, and the file refused).
    window = make_window(restore=False)
    assert window.state.view["reference"] == 64
    window.state.update(seq_len=8)
    window.state.flush()
    assert window.state.view["reference"] == 4
    path = tmp_path / "short.json"
    assert window.save_session(str(path)) is None
    assert read_session(path).view["reference"] == 4
    assert make_window(restore=False).open_session(str(path)) is None
