"""Benchmark of a real decoder (issue #41): open, tokenise, trace every layer, peak memory. From the repository root:

    python tests/benchmarks/decoder.py PATH            # a GGUF file or a Hugging Face folder
    python tests/benchmarks/decoder.py PATH --tokens 64 --repeats 5

Each measurement runs in a fresh process (``-I``: nothing cached, nothing of
the caller's environment), so "open" includes importing the model layer:

- open: ``open_decoder(PATH)`` (headers, config, metadata);
- tokenizer: the first ``tokenize`` (a GGUF vocabulary is built then);
- trace: ``trace`` of ``--tokens`` ids through every layer, median of
  ``--repeats`` in one process (the first, cold, printed too);
- peak RSS of that process.

Budgets (issue #41, SmolLM2-135M Q4_1): open about 1 s, trace of 64 tokens
through all 30 layers ≤ 3 s, peak RSS < 1.5 GB. Exit status 0 when met.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPEN_BUDGET_S = 1.5
TRACE_BUDGET_S = 3.0
RSS_BUDGET_MB = 1500
TEXT = ("In the beginning the Universe was created. This has made a lot of people very angry and been widely "
        "regarded as a bad move. ") * 8

_CHILD = r"""
import json, resource, statistics, sys, time
sys.path.insert(0, {root!r})
start = time.perf_counter()
from posenc_gui.model import open_decoder
decoder = open_decoder({path!r})
opened = time.perf_counter() - start
start = time.perf_counter()
try:
    ids = decoder.tokenize({text!r})[:{tokens}]
except ValueError:  # no tokenizer: ids from the vocabulary
    ids = [i % decoder.config.vocab_size for i in range(100, 100 + {tokens})]
tokenised = time.perf_counter() - start
times = []
for _ in range({repeats}):
    start = time.perf_counter()
    decoder.trace(ids)
    times.append(time.perf_counter() - start)
print(json.dumps({{"open": opened, "tokenizer": tokenised, "tokens": len(ids), "layers": decoder.config.num_layers,
                  "first": times[0], "median": statistics.median(times),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    code = _CHILD.format(root=str(ROOT), path=str(Path(args.path).resolve()), text=TEXT, tokens=args.tokens,
                         repeats=args.repeats)
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=False)
    if done.returncode:
        print(done.stderr, file=sys.stderr)
        return 2
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"open {result['open']:.2f} s (budget ≈ {OPEN_BUDGET_S} s); first tokenize {result['tokenizer']:.2f} s; "
          f"trace of {result['tokens']} tokens × {result['layers']} layers: median {result['median']:.2f} s "
          f"(first {result['first']:.2f} s, budget {TRACE_BUDGET_S} s); peak RSS {result['rss_mb']:.0f} MB "
          f"(budget {RSS_BUDGET_MB} MB)")
    met = result["open"] <= OPEN_BUDGET_S and result["median"] <= TRACE_BUDGET_S and result["rss_mb"] < RSS_BUDGET_MB
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
