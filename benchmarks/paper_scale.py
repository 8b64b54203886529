"""Paper-scale rebuilds (issue 38, item 1): KLUE-STS at the paper's 13,224 pairs with 7
simulated annotators each (about 100,000 annotations, control pairs included, through a
real Label Studio server), JSTS at 12,000 pairs with 5 each, and the KoBBQ expansion of
every template of the release, each through ``benchforge rebuild`` as a user runs it.

For each dataset the recipe is the demo's, its inputs swapped for the full corpora
(``--corpora``, default ``../shared/corpora``) and its sizes for the paper's; it runs in
a Label Studio home of its own under ``--out``. The reference, in the same run, is the
demo recipe itself (a few hundred items): every step's seconds per row at paper scale are
printed against the demo's as a ratio, so a step that grows faster than linearly shows
as a ratio well above 1 (``--no-reference`` skips it). Printed per step: seconds, rows in,
rows/s, and the peak resident memory of benchforge (the command, its Dask workers),
of its Prefect server and of the Label Studio server, sampled every 0.25 s; then the
Label Studio database's size, the task and annotation counts, and the row accounting of
every step (in = kept + dropped, from ``rebuild.json``).

``--kill-at STEP`` kills the command (SIGKILL, its whole process group, as a crash
would) a few seconds after STEP begins, then runs the same command again: it must finish,
with every Label Studio task there once.

    .venv/bin/python benchmarks/paper_scale.py [--datasets klue-sts jsts kobbq]
        [--corpora ../shared/corpora] [--out runs/paper-scale] [--kill-at pull]

Targets (issue 38, 2-core machine): KLUE-STS at paper scale within 10 minutes after
set-up, benchforge's peak RSS within 4 GB.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # benchforge's own modules, for the plan and the counts
BENCHFORGE = ROOT / ".venv" / "bin" / "benchforge"
STEP_LINE = re.compile(r"^\[(\d+)/(\d+)\] (\S+)\s+([\d.]+) s")
MB = 2**20


# ------------------------------------------------------------------------ recipes


def _absolute(node: object, base: Path) -> object:
    """Every relative path of a recipe (a string starting with ./ or ../) made absolute
    against the recipe's folder, so that the recipe can be written elsewhere."""
    if isinstance(node, dict):
        return {k: _absolute(v, base) for k, v in node.items()}
    if isinstance(node, list):
        return [_absolute(v, base) for v in node]
    if isinstance(node, str) and node.startswith(("./", "../")):
        return str((base / node).resolve())
    return node


def demo_recipe(name: str) -> dict:
    path = ROOT / "recipes" / f"{name}.yaml"
    return _absolute(yaml.safe_load(path.read_text(encoding="utf-8")), path.parent)


def _nsmc_head(corpora: Path, reviews: int, work: Path) -> Path:
    """The first ``reviews`` reviews of the NSMC crawl (ingest at the full crawl's 712k
    is benchmarks/ingest.py's job; KLUE-STS drew its sentences from a sample too)."""
    target = work / f"nsmc-first-{reviews}.jsonl.gz"
    if not target.exists():
        part = target.with_suffix(".part")
        with gzip.open(corpora / "nsmc" / "reviews.jsonl.gz", "rt", encoding="utf-8") as src, \
                gzip.open(part, "wt", encoding="utf-8") as dst:  # fmt: skip
            for n, line in enumerate(src):
                if n >= reviews:
                    break
                dst.write(line)
        part.replace(target)
    return target


def _sts_controls(corpora: Path, count: int, work: Path) -> Path:
    """``count`` KorSTS train pairs spread over the score range as control items (the
    demo's 40 cover 10% of 300 items only), in the demo's layout."""
    target = work / f"sts-controls-{count}.jsonl"
    with (corpora / "korsts-kornli" / "sts-train.tsv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    rows = [r for r in rows if r.get("sentence1") and r.get("sentence2") and r.get("score")]
    ranked = sorted(rows, key=lambda r: (float(r["score"]), r["filename"], r["id"]))
    step = len(ranked) / count
    chosen = [ranked[int(i * step)] for i in range(count)]
    lines = [json.dumps({"item_id": f"control-korsts-train-{r['filename']}-{r['id']}-{i}",
                         "sentence1": r["sentence1"], "sentence2": r["sentence2"],
                         "value": round(float(r["score"]), 2), "source": "korsts-train",
                         "license": "CC-BY-SA-4.0"}, ensure_ascii=False)
             for i, r in enumerate(chosen)]  # fmt: skip
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def sts_recipe(args: argparse.Namespace, work: Path) -> dict:
    """KLUE-STS (Park et al. 2021, 3.2): 13,224 pairs (11,668 + 519 + 1,037), 7 raters."""
    r = demo_recipe("sts-demo")
    r["name"] = "sts-paper"
    pairs = args.sts_pairs
    for c in r["corpora"]:
        if c["name"] == "nsmc":
            c["path"] = str(_nsmc_head(args.corpora, args.nsmc_reviews, work))
        elif c["name"] == "parakqc":
            c["path"] = str(args.corpora / "parakqc" / "paraKQC_v1.txt")
    per_method = -(-pairs // 3)
    for c in r["pairing"]["corpora"]:
        if "gsm" in c:
            c["gsm"] = {"pool": max(4 * per_method, 2000), "pairs": per_method + per_method // 5}
        else:  # ParaKQC: 1,000 intents of 10 sentences
            per_group = -(-per_method // 1000) + 1
            c["metadata"]["similar_per_group"] = per_group
            c["metadata"]["dissimilar_per_group"] = per_group
    r["items"]["sample"] = pairs
    controls = r["annotation"]["controls"]
    need = -(-int(pairs * controls["share"]) // (1 - controls["share"])) + 10
    controls["items"] = str(_sts_controls(args.corpora, int(need), work))
    r["annotation"]["human"]["sample"] = 300
    r["export"]["guid_prefix"] = "benchforge-sts-paper"
    return r


def jsts_recipe(args: argparse.Namespace, work: Path) -> dict:
    """JSTS (JGLUE 3.2.2): 12,451 pairs in v1.3's train + valid, 5 raters each."""
    r = demo_recipe("jsts-demo")
    r["name"] = "jsts-paper"
    jglue = args.corpora / "jglue"
    template = dict(r["corpora"][0])
    r["corpora"] = [
        {**template, "name": "jsts-train", "path": str(jglue / "jsts-v1.3_train-v1.3.json")},
        {**template, "name": "jsts-valid", "path": str(jglue / "jsts-v1.3_valid-v1.3.json")},
    ]
    r["jglue"]["releases"] = ["jsts-train", "jsts-valid"]
    same = args.jsts_pairs * 3 // 4
    r["jglue"]["same_image"] = same
    r["jglue"]["other_image"] = args.jsts_pairs - same
    return r


def kobbq_recipe(args: argparse.Namespace, work: Path) -> dict:
    """KoBBQ (Jin et al. 2024): every template of the release expanded (76,048 samples
    in the paper)."""
    r = demo_recipe("kobbq-demo")
    r["name"] = "kobbq-paper"
    r["corpora"][0]["path"] = str(args.corpora / "kobbq" / "KoBBQ_templates.tsv")
    r["corpora"][0]["license_file"] = str(args.corpora / "kobbq" / "LICENSE")
    r["kobbq"]["survey"] = str(args.corpora / "kobbq" / "KoBBQ_survey_result.json")
    return r


DATASETS = {"klue-sts": ("sts-demo", sts_recipe), "jsts": ("jsts-demo", jsts_recipe),
            "kobbq": ("kobbq-demo", kobbq_recipe)}  # fmt: skip


# ------------------------------------------------------------------------ running


class Sampler(threading.Thread):
    """Resident memory of a command's process tree every ``every`` seconds, split into
    benchforge (the command and its Dask workers), its Prefect server and Label Studio
    (its own session; found by its data folder)."""

    def __init__(self, pid: int, ls_data: Path, every: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pid, self.ls_data, self.every = pid, str(ls_data), every
        self.window = {"benchforge": 0, "prefect": 0, "labelstudio": 0}
        self.peak = dict(self.window)
        self.last = dict(self.window)
        self.stopped = threading.Event()
        self.lock = threading.Lock()

    def _kind(self, proc: psutil.Process) -> str:
        cmd = " ".join(proc.cmdline())
        if "label-studio" in cmd or "label_studio" in cmd:
            return "labelstudio"
        if "uvicorn" in cmd and "prefect" in cmd:
            return "prefect"
        return "benchforge"

    def sample(self) -> dict[str, int]:
        rss = {"benchforge": 0, "prefect": 0, "labelstudio": 0}
        procs: list[psutil.Process] = []
        try:
            root = psutil.Process(self.pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            pass
        seen = {p.pid for p in procs}
        for p in psutil.process_iter(["cmdline"]):  # Label Studio runs in its own session
            cmd = " ".join(p.info.get("cmdline") or [])
            if p.pid not in seen and self.ls_data in cmd:
                procs += [p, *p.children(recursive=True)]
        for p in procs:
            try:
                rss[self._kind(p)] += p.memory_info().rss
            except psutil.Error:
                continue
        return rss

    def run(self) -> None:
        while not self.stopped.is_set():
            rss = self.sample()
            with self.lock:
                self.last = rss
                for k, v in rss.items():
                    self.window[k] = max(self.window[k], v)
                    self.peak[k] = max(self.peak[k], v)
            time.sleep(self.every)

    def take_window(self) -> dict[str, int]:
        """The peaks since the last call (a step shorter than a sample: the last sample)."""
        with self.lock:
            window, self.window = self.window, dict.fromkeys(self.window, 0)
            last = self.last
        return window if any(window.values()) else last


def run_rebuild(recipe: Path, out: Path, home: Path, log: Path,
                kill_at: str | None = None, kill_after: float = 3.0) -> dict:  # fmt: skip
    """One ``benchforge rebuild`` (the server left running for the counts); its steps as
    printed, with the peak memory of each step's window, and whether it was killed."""
    env = {**os.environ, "BENCHFORGE_HOME": str(home / "bf"),
           "BENCHFORGE_CONFIG": str(home / "config"), "PYTHONUNBUFFERED": "1",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
           # the Label Studio install every home shares (scripts/bootstrap.sh made it)
           "BENCHFORGE_LS_VENV": os.environ.get("BENCHFORGE_LS_VENV") or str(
               Path.home() / ".local/share/benchforge/labelstudio/venv")}  # fmt: skip
    for key in ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY", "PREFECT_API_URL"):
        env.pop(key, None)
    started = time.perf_counter()
    proc = subprocess.Popen(
        [str(BENCHFORGE), "rebuild", str(recipe), "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        start_new_session=True, cwd=ROOT,
    )  # fmt: skip
    sampler = Sampler(proc.pid, home / "bf" / "labelstudio" / "data")
    sampler.start()
    steps, killed, names = [], False, None
    timer = None
    with log.open("a", encoding="utf-8", buffering=1) as sink:  # line by line
        sink.write(f"\n=== {recipe.name} -> {out} (kill at {kill_at})\n")
        assert proc.stdout is not None
        for line in proc.stdout:
            sink.write(line)
            m = STEP_LINE.match(line)
            if not m:
                continue
            index, name, seconds = int(m[1]), m[3], float(m[4])
            steps.append({"step": name, "seconds": seconds, "peak": sampler.take_window(),
                          "at": round(time.perf_counter() - started, 1)})  # fmt: skip
            if names is None:
                names = _steps_of(out)
            following = names[index] if names and index < len(names) else None
            if kill_at and not killed and following == kill_at:

                def kill() -> None:
                    os.killpg(proc.pid, signal.SIGKILL)

                timer = threading.Timer(kill_after, kill)
                timer.start()
                killed = True
    code = proc.wait()
    if timer is not None:
        timer.cancel()
    sampler.stopped.set()
    sampler.join()
    return {"code": code, "seconds": round(time.perf_counter() - started, 1), "steps": steps,
            "killed": killed and code != 0, "peak": sampler.peak}  # fmt: skip


def _steps_of(out: Path) -> list[str] | None:
    """The run's step names in order (rebuild.json holds the finished ones; the plan is
    the task kind's)."""
    record = out / "rebuild.json"
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    from flows.rebuild import steps_of
    from pipelines.core.recipe import load_recipe
    from pipelines.rebuild.kinds import task_kind

    recipe = load_recipe(Path(data["recipe"]))
    return steps_of(task_kind(recipe.task), recipe)


def label_studio_counts(home: Path) -> dict:
    """Projects' task and annotation counts and the database size, then the server
    stopped."""
    os.environ["BENCHFORGE_HOME"] = str(home / "bf")
    os.environ["BENCHFORGE_CONFIG"] = str(home / "config")
    from pipelines.annotation import annotate, ls_server

    data = home / "bf" / "labelstudio" / "data"
    db = sum(p.stat().st_size for p in data.glob("label_studio.sqlite3*"))
    counts = {}
    try:
        ls = annotate.client()
        for project in ls.projects.list():
            counts[project.title] = {"tasks": project.task_number,
                                     "annotations": project.total_annotations_number}  # fmt: skip
    finally:
        ls_server.down()
    return {"database_mb": round(db / MB, 1), "projects": counts}


def accounting(out: Path) -> list[str]:
    """Steps whose rows do not add up (in = kept + dropped), from rebuild.json."""
    data = json.loads((out / "rebuild.json").read_text(encoding="utf-8"))
    bad = []
    for name, entry in data["steps"].items():
        rows = entry.get("rows")
        if rows and rows["in"] != rows["kept"] + sum(rows.get("dropped", {}).values()):
            bad.append(name)
    return bad


def rows_in(out: Path) -> dict[str, int]:
    """Rows (or tasks, or annotations) each step took in, from rebuild.json: its row
    accounting where it keeps one, else the items a push sent, the tasks a wait counted,
    the annotations a pull read."""
    data = json.loads((out / "rebuild.json").read_text(encoding="utf-8"))
    units = {}
    for name, entry in data["steps"].items():
        rows = (entry.get("rows") or {}).get("in")
        units[name] = int(rows or entry.get("items") or entry.get("tasks")
                          or entry.get("annotations") or 0)  # fmt: skip
    return units


def _table(name: str, paper: dict, ref: dict | None, paper_rows: dict, ref_rows: dict) -> None:
    print(f"\n{name}: per step (seconds, rows in, rows/s, peak RSS MB: benchforge / Prefect "
          "/ Label Studio" + ("; s/row against the demo's" if ref else "") + ")")  # fmt: skip
    ref_steps = {s["step"]: s for s in (ref or {}).get("steps", [])}
    for s in paper["steps"]:
        n = paper_rows.get(s["step"], 0)
        rate = f"{n / s['seconds']:>10,.0f}" if n and s["seconds"] > 0 else f"{'':>10}"
        peak = s["peak"]
        line = (f"  {s['step']:<18} {s['seconds']:>8.1f} s {n:>9,} in {rate}/s  "
                f"{peak['benchforge'] / MB:>6,.0f} / {peak['prefect'] / MB:>4,.0f} / "
                f"{peak['labelstudio'] / MB:>5,.0f} MB")  # fmt: skip
        r = ref_steps.get(s["step"])
        rn = ref_rows.get(s["step"], 0)
        if r and n and rn and r["seconds"] > 0.05 and s["seconds"] > 0.05:
            line += f"  x{(s['seconds'] / n) / (r['seconds'] / rn):.2f} per row"
        print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--datasets",
        nargs="+",
        choices=sorted(DATASETS),
        default=["klue-sts", "jsts", "kobbq"],
        help="which rebuilds to run",
    )
    parser.add_argument(
        "--corpora",
        type=Path,
        default=ROOT.parent / "shared" / "corpora",
        help="the full corpora (nsmc, parakqc, korsts-kornli, jglue, kobbq)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "runs" / "paper-scale",
        help="work folder: recipes, inputs, runs, Label Studio homes, logs",
    )
    parser.add_argument(
        "--sts-pairs",
        type=int,
        default=13224,
        help="KLUE-STS pairs sent to annotators (the paper's 13,224)",
    )
    parser.add_argument(
        "--nsmc-reviews",
        type=int,
        default=60000,
        help="NSMC reviews ingested for the GSM pairs (the first N)",
    )
    parser.add_argument("--jsts-pairs", type=int, default=12000, help="JSTS pairs (12,000)")
    parser.add_argument(
        "--kill-at",
        default=None,
        help="kill each paper-scale run a few seconds after this step begins, "
        "then rerun it (the resume check)",
    )
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the demo-size reference runs"
    )
    parser.add_argument("--fresh", action="store_true", help="remove earlier runs in --out")
    args = parser.parse_args()
    args.corpora = args.corpora.resolve()
    out = args.out.resolve()
    if args.fresh and out.exists():
        shutil.rmtree(out)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    log = out / "paper_scale.log"
    summary = {}
    for key in args.datasets:
        demo, make = DATASETS[key]
        recipe = make(args, out / "inputs")
        path = out / "recipes" / f"{recipe['name']}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(recipe, allow_unicode=True, sort_keys=False), "utf-8")
        ref = ref_rows = None
        if not args.no_reference:
            ref_path = ROOT / "recipes" / f"{demo}.yaml"
            ref_out = out / "runs" / f"{demo}-reference"
            shutil.rmtree(ref_out, ignore_errors=True)
            ref = run_rebuild(ref_path, ref_out, out / "homes" / f"{demo}-reference", log)
            label_studio_counts(out / "homes" / f"{demo}-reference")
            if ref["code"] != 0:
                print(f"{key}: the reference run failed ({ref['code']}); see {log}")
                return 1
            ref_rows = rows_in(ref_out)
        run_out = out / "runs" / recipe["name"]
        home = out / "homes" / recipe["name"]
        first = run_rebuild(path, run_out, home, log, kill_at=args.kill_at)
        runs = [first]
        if first["killed"]:
            print(f"{key}: killed during {args.kill_at} after {first['seconds']} s; "
                  "running the same command again", flush=True)  # fmt: skip
            runs.append(run_rebuild(path, run_out, home, log))
        last = runs[-1]
        counts = label_studio_counts(home)
        if last["code"] != 0:
            print(f"{key}: the paper-scale run failed ({last['code']}); see {log}")
            return 1
        paper_rows = rows_in(run_out)
        for number, run in enumerate(runs, 1):
            what = key if len(runs) == 1 else (
                f"{key}, run {number} ({'killed' if run['killed'] else 'resumed'})")  # fmt: skip
            _table(what, run, ref, paper_rows, ref_rows or {})
        peak = {k: max(r["peak"][k] for r in runs) for k in runs[0]["peak"]}
        total = sum(r["seconds"] for r in runs)
        bad = accounting(run_out)
        print(f"{key}: {total:,.1f} s in all ({' + '.join(str(r['seconds']) for r in runs)}), "
              f"peak RSS benchforge {peak['benchforge'] / MB:,.0f} MB, Prefect "
              f"{peak['prefect'] / MB:,.0f} MB, Label Studio {peak['labelstudio'] / MB:,.0f} MB; "
              f"Label Studio database {counts['database_mb']:,} MB")  # fmt: skip
        for title, c in counts["projects"].items():
            print(f"  project {title!r}: {c['tasks']:,} tasks, {c['annotations']:,} annotations")
        print(f"  row accounting: {'every step adds up' if not bad else 'BROKEN in ' + str(bad)}")
        if ref:
            scale = _items(paper_rows) / max(_items(ref_rows), 1)
            print(f"  ratio: {total / max(ref['seconds'], 0.1):.1f}x the demo's "
                  f"{ref['seconds']} s for {scale:.0f}x its items")  # fmt: skip
        summary[key] = {"runs": runs, "counts": counts, "accounting_broken": bad,
                        "reference": ref}  # fmt: skip
    (out / "paper_scale.json").write_text(json.dumps(summary, indent=2, default=str), "utf-8")
    return 0


def _items(rows: dict[str, int]) -> int:
    """The items people labelled: the agreement step's rows in (else the largest step)."""
    return rows.get("agree") or max(rows.values(), default=1) or 1


if __name__ == "__main__":
    sys.exit(main())
