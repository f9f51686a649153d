"""Default CPU threads against one thread: the README's Quick start and one net fit on LabelMe.

Each workload runs in a fresh interpreter, with the environment as a user has it ("default":
no thread variable set) and with ``OMP_NUM_THREADS=1`` (torch, numba and OpenBLAS then use one
thread), on the machine as it is ("quiet") and with one busy-loop process per core but one
("loaded": on 2 cores, the other core busy). The Quick start is the ``python`` block of
README.md, run as written in an empty folder; the LabelMe fit is ``CrowdLayerClassifier`` with
its defaults on the 1000 training tasks' VGG16 features and votes (shared data folder). The
time is the workload's own, from the first import of skcrowd to its end (the interpreter's
start is left out); runs of a setting and condition alternate, and the median is printed with
the machine's load (``uptime``), since on a shared machine the other jobs change the figures.

Run from the repository root (2-core machine, about 3 minutes when quiet)::

    python benchmarks/threads.py                  # both workloads, quiet and loaded
    python benchmarks/threads.py --repeats 3 --workloads labelme
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LABELME = ROOT.parent / "shared" / "data" / "labelme"
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "NUMBA_NUM_THREADS")

LABELME_FIT = f"""
from skcrowd.datasets import load_crowd_dataset
from skcrowd.neural import CrowdLayerClassifier

crowd = load_crowd_dataset({str(LABELME)!r})
CrowdLayerClassifier(random_state=0).fit(crowd.data, crowd.votes)
"""


def readme_quick_start():
    """The ``python`` block of README.md (the Quick start)."""
    blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(),
                        re.DOTALL | re.MULTILINE)
    if len(blocks) != 1:
        raise SystemExit(f"README.md has {len(blocks)} python blocks; this script runs one.")
    return blocks[0]


def timed_program(code):
    """``code`` preceded by a clock start and followed by the elapsed time on the last line."""
    return ("import time as _time\n_start = _time.perf_counter()\n" + code
            + "\nprint(f'elapsed {_time.perf_counter() - _start:.3f}')\n")


def run(code, one_thread):
    """Seconds ``code`` takes in a fresh interpreter, in an empty working folder."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    if one_thread:
        env.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as folder:
        env["TMPDIR"] = folder  # the Quick start's cache (mkdtemp) goes away with it
        work = Path(folder, "work")
        work.mkdir()
        done = subprocess.run([sys.executable, "-c", timed_program(code)], cwd=work, env=env,
                              capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the workload failed:\n{done.stderr[-3000:]}")
    return float(done.stdout.strip().splitlines()[-1].split()[1])


def load():
    return os.getloadavg()[0]


def busy_processes(n):
    """``n`` busy-loop interpreters (one core each)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", nargs="+", default=["quickstart", "labelme"],
                        choices=["quickstart", "labelme"])
    parser.add_argument("--conditions", nargs="+", default=["quiet", "loaded"],
                        choices=["quiet", "loaded"])
    parser.add_argument("--repeats", type=int, default=1, help="runs of each cell (median)")
    args = parser.parse_args(argv)
    codes = {"quickstart": readme_quick_start(), "labelme": LABELME_FIT}
    if "labelme" in args.workloads and not LABELME.is_dir():
        raise SystemExit(f"no LabelMe folder at {LABELME}")
    n_cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{n_cores} cores; {time.strftime('%Y-%m-%d %H:%M')}; Python {sys.version.split()[0]}")
    rows = []
    for condition in args.conditions:
        busy = busy_processes(max(n_cores - 1, 1)) if condition == "loaded" else []
        try:
            for workload in args.workloads:
                times = {False: [], True: []}
                loads = [load()]
                for _ in range(args.repeats):
                    for one_thread in (False, True):
                        times[one_thread].append(run(codes[workload], one_thread))
                        loads.append(load())
                default, one = (statistics.median(times[k]) for k in (False, True))
                rows.append((workload, condition, default, one, min(loads), max(loads)))
                print(f"  {workload}, {condition}: default {times[False]}, one thread "
                      f"{times[True]}", flush=True)
        finally:
            for process in busy:
                process.kill()
                process.wait()
    print(textwrap.dedent("""
        | workload | machine | default threads (s) | OMP_NUM_THREADS=1 (s) | ratio | load (1 min) |
        |---|---|---|---|---|---|"""))
    for workload, condition, default, one, low, high in rows:
        print(f"| {workload} | {condition} | {default:.1f} | {one:.1f} | {default / one:.2f} | "
              f"{low:.1f}-{high:.1f} |")


if __name__ == "__main__":
    main()
