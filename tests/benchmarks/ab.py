"""Hold this checkout against an earlier commit: one benchmark line, alternating fresh processes.

    python tests/benchmarks/ab.py 1d281c6                         # the default-size steps (d_model drag)
    python tests/benchmarks/ab.py 1d281c6 --rounds 7 -- --front spectrum
    python tests/benchmarks/run.py --ab 1d281c6                   # the same, from the benchmark itself
    python tests/benchmarks/ab.py 1d281c6 --startup               # start-up to the first painted window
    python tests/benchmarks/ab.py main --this-benchmark -- --switch   # a line the reference's run.py lacks

This shared VM's speed changes by up to 2× from one day (or minute) to the
next, so a figure is only comparable with one measured beside it. For each
round the reference (a git worktree of REV with an install of its own, kept
under ``~/.cache/posenc-ab/``) and this checkout run the same benchmark line
in fresh processes, in alternating order; the ratio of each round's pair is
taken before the median, so a change of the machine's speed between rounds
cancels out. Prints both medians and the median ratio (this checkout ÷ the
reference: below 1 is faster). It imports nothing of posenc_gui.

``--startup`` times ``python -m posenc_gui --no-restore --quit-after-first-paint``
of each side instead, and the bare PySide6 + pyqtgraph window
(``bare_window.py``) beside them.

``--this-benchmark`` runs this checkout's ``run.py`` on both sides (each
side's Python imports its own posenc_gui): for a benchmark line added
after the reference, such as ``--switch``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parents[1]
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "posenc-ab"
#: The screen of every process started: a 1920 × 1200 desktop, as a user's. On Qt's own offscreen screen
#: (800 × 800) the window opens at that size, with two of its five core panels hidden.
OFFSCREEN_DESKTOP = f"offscreen:configfile={HERE.parent / 'desktop_screen.json'}"
#: The number a benchmark line reports first, e.g. "d_model step 21.40 ms".
FIRST_MS = re.compile(r"step (\d+(?:\.\d+)?) ms")


def git(*args: str, cwd: Path = CHECKOUT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def reference_python(rev: str) -> tuple[Path, Path]:
    """The worktree of ``rev`` and the Python of its own virtual environment, made once and kept."""
    sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    home = CACHE / sha[:12]
    tree, venv = home / "tree", home / "venv"
    python = venv / "bin" / "python"
    if not (tree / "pyproject.toml").exists():
        home.mkdir(parents=True, exist_ok=True)
        git("worktree", "add", "--force", "--detach", str(tree), sha)
    if not python.exists() or not (home / "installed").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        print(f"ab: installing {rev} ({sha[:12]}) into {venv} (once)", file=sys.stderr)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(tree)], check=True)
        (home / "installed").write_text(sha + "\n")
    return tree, python


def timed_line(python: Path, script: Path, args: list[str], env: dict[str, str]) -> float:
    """The first ``step N ms`` figure of ``script``'s output, run in a fresh process."""
    done = subprocess.run([str(python), str(script), *args], capture_output=True, text=True, env=env)
    found = FIRST_MS.search(done.stdout)
    if done.returncode != 0 or not found:
        raise RuntimeError(f"{script} {' '.join(args)} failed (exit {done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()[-800:]}")
    return float(found.group(1))


def first_paint_seconds(command: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float]:
    """Wall seconds of a fresh process to its ``first paint`` line, and to its exit (run.py times start-up so).

    ``cwd``: the folder it starts in. ``python -m`` puts that folder first on
    ``sys.path``: a side's ``-m posenc_gui`` runs in its own tree, or it
    would import whatever ``posenc_gui`` the caller's folder holds.
    """
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True,
                               cwd=cwd)
    line = process.stdout.readline()
    first_paint = time.perf_counter() - start
    process.communicate()
    if not line.startswith("first paint") or process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} did not report its first paint (exit {process.returncode}): {line!r}")
    return first_paint, time.perf_counter() - start


def timed_startup(command: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    """Wall time from launch to the process's ``first paint`` line, started in ``cwd``, in ms."""
    return 1000 * first_paint_seconds(command, env, cwd)[0]


def environment(side: Path) -> dict[str, str]:
    """A fresh process's environment as a user's: offscreen on a desktop-sized screen, its own bytecode cache
    written and read.

    ``PYTHONDONTWRITEBYTECODE`` (set in some shells and CI) is dropped: with
    it, an editable checkout compiled every module of the app at each
    start (about 0.9 s), while the reference's and the bare window's
    installed packages read the bytecode pip wrote.
    """
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    return {**env, "QT_QPA_PLATFORM": OFFSCREEN_DESKTOP, "POSENC_GUI_SETTINGS": str(CACHE / "ab-settings.ini"),
            "PYTHONPYCACHEPREFIX": str(CACHE / "bytecode" / side.name)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rev", help="the reference commit (any git revision)")
    parser.add_argument("--rounds", type=int, default=5, help="pairs of fresh processes (default 5)")
    parser.add_argument("--startup", action="store_true", help="time start-up to the first painted window instead")
    parser.add_argument("--this-benchmark", action="store_true",
                        help="run this checkout's run.py on both sides (a line the reference's run.py lacks)")
    parser.add_argument("bench_args", nargs="*", metavar="-- RUN_ARGS",
                        help="run.py's arguments for both sides (default --default-steps)")
    args = parser.parse_intermixed_args(argv)  # options after REV too: "ab.py 1d281c6 --rounds 7 -- --front x"
    if args.rounds < 1:
        parser.error("--rounds must be ≥ 1")
    tree, ref_python = reference_python(args.rev)
    sides = {"reference": (ref_python, tree), "this checkout": (Path(sys.executable), CHECKOUT)}
    if args.startup:
        command = ["-m", "posenc_gui", "--no-restore", "--quit-after-first-paint"]
        bare = [sys.executable, str(HERE / "bare_window.py")]
        # each side in its own tree (see first_paint_seconds): from this checkout, the reference's
        # "-m posenc_gui" imported this checkout's package, and both sides timed the same code
        runs = {name: (lambda p=python, t=root: timed_startup([str(p), *command], environment(t), cwd=t))
                for name, (python, root) in sides.items()}
        runs["bare window"] = lambda: timed_startup(bare, environment(HERE), cwd=HERE)
        unit = "ms to the first paint"
    else:
        bench = args.bench_args or ["--default-steps"]
        runs = {name: (lambda p=python, t=root: timed_line(
                    p, (CHECKOUT if args.this_benchmark else t) / "tests" / "benchmarks" / "run.py", bench,
                    environment(t)))
                for name, (python, root) in sides.items()}
        unit = f"ms (run.py {' '.join(bench)})"
    for run in runs.values():
        run()  # warm-up: bytecode written, files in the page cache
    figures: dict[str, list[float]] = {name: [] for name in runs}
    order = list(runs)
    for round_ in range(args.rounds):
        for name in (order if round_ % 2 == 0 else order[::-1]):
            figures[name].append(runs[name]())
    ratios = [new / old for new, old in zip(figures["this checkout"], figures["reference"])]
    print(f"A/B against {args.rev}, {args.rounds} alternating rounds, {unit}:")
    for name, values in figures.items():
        print(f"  {name:>14}: median {statistics.median(values):.2f} ({', '.join(f'{v:.1f}' for v in values)})")
    print(f"  ratio this checkout / reference: median {statistics.median(ratios):.3f} "
          f"(rounds {', '.join(f'{r:.2f}' for r in ratios)})")
    if "bare window" in figures:
        bare_ratios = [new / bare for new, bare in zip(figures["this checkout"], figures["bare window"])]
        print(f"  ratio this checkout / bare window: median {statistics.median(bare_ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
