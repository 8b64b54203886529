"""Bad input to ``benchforge baseline``, ``deploy`` and ``webhook serve`` (issue 51,
items 8, 10 and 13) is one clear error line (the option, variable, file or port and the
problem; exit 2), given before any work, connection or output: a release whose train
file was deleted is not cross-fitted into the card, an option out of range or a device
this machine lacks is refused before training, a schedule is checked before the Prefect
server is contacted and an unreachable server is named, a port out of range or taken is
refused before the endpoint prints its address. The MT step of KorNLI/KorSTS shows its
progress (item 13). Real processes, real files, real sockets; no mocks."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flows.cli", *args],
        cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


def one_error_line(got: subprocess.CompletedProcess, *pieces: str) -> str:
    """The command exited 2 with one ``benchforge: error:`` line holding ``pieces``."""
    lines = [line for line in got.stderr.splitlines() if line.strip()]
    assert got.returncode == 2, (got.returncode, got.stdout[-1500:], got.stderr[-3000:])
    assert "Traceback" not in got.stderr, got.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("benchforge: error: "), got.stderr[-3000:]
    for piece in pieces:
        assert piece in lines[0], lines[0]
    return lines[0]


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def held_port():
    """A port another program listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


# ---------------------------------------------------------------------------- baseline

MARC = {
    "train.json": [{"review_id": f"t{i}", "sentence": "良い商品" if i % 2 else "悪い商品",
                    "label": "positive" if i % 2 else "negative"} for i in range(12)],
    "valid.json": [{"review_id": f"v{i}", "sentence": "良い" if i % 2 else "悪い",
                    "label": "positive" if i % 2 else "negative"} for i in range(4)],
    "test.json": [{"review_id": f"s{i}", "sentence": "良い" if i % 2 else "悪い",
                   "label": "positive" if i % 2 else "negative"} for i in range(4)],
}  # fmt: skip


@pytest.fixture
def release(tmp_path) -> Path:
    """A MARC-ja release as the export writes one: its split files, card.json (with the
    export's file counts) and manifest.json listing every file."""
    import hashlib

    dataset = tmp_path / "run" / "dataset"
    dataset.mkdir(parents=True)
    for name, rows in MARC.items():
        (dataset / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                            for r in rows), encoding="utf-8")  # fmt: skip
    card = {
        "task_kind": "marc-ja",
        "recipe": {"language": "ja"},
        "export": {"layout": "marc-ja", "files": {n: len(r) for n, r in MARC.items()}},
    }
    (dataset / "card.json").write_text(json.dumps(card), encoding="utf-8")
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in dataset.iterdir()}
    (dataset / "manifest.json").write_text(json.dumps({"key": "k", "files": files}),
                                           encoding="utf-8")  # fmt: skip
    return tmp_path / "run"


def _untouched(run: Path) -> None:
    """Nothing written: no baseline folder, the card as the export wrote it."""
    assert not (run / "baseline").exists()
    card = json.loads((run / "dataset" / "card.json").read_text(encoding="utf-8"))
    assert "baseline" not in card


@pytest.mark.parametrize(
    ("args", "pieces"),
    [
        (["--epochs", "0"], ["--epochs 0", "at least 1"]),
        (["--epochs", "-3"], ["--epochs -3", "at least 1"]),
        (["--lr", "nan"], ["--lr nan", "learning rate"]),
        (["--lr", "inf"], ["--lr inf", "learning rate"]),
        (["--lr", "0"], ["--lr 0", "learning rate"]),
        (["--layers", "0"], ["--layers 0"]),
        (["--hidden", "129"], ["--hidden 129", "heads"]),
        (["--seed", "-1"], ["--seed -1"]),
        (["--device", "gpu"], ["--device 'gpu'", "cpu, cuda or cuda:N"]),
        (["--device", "cuda:99"], ["--device cuda:99"]),
    ],
)
def test_baseline_options_out_of_range_are_refused_before_training(release, args, pieces):
    one_error_line(cli("baseline", str(release), *args), *pieces)
    _untouched(release)


def test_baseline_with_a_missing_encoder_folder_is_refused(release, tmp_path):
    missing = tmp_path / "no-such-encoder"
    one_error_line(cli("baseline", str(release), "--encoder", str(missing)),
                   f"--encoder {missing}", "no such folder")  # fmt: skip
    empty = tmp_path / "empty"
    empty.mkdir()
    one_error_line(cli("baseline", str(release), "--encoder", str(empty)), "no config.json")
    _untouched(release)


def test_baseline_on_cuda_without_a_gpu_says_so_instead_of_an_assertion(release):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: --device cuda is usable here")
    one_error_line(cli("baseline", str(release), "--device", "cuda"), "--device cuda",
                   "use --device cpu")  # fmt: skip
    _untouched(release)


def test_baseline_of_a_release_whose_train_file_was_deleted_is_refused(release):
    (release / "dataset" / "train.json").unlink()
    one_error_line(cli("baseline", str(release)), "train.json", "missing", "restore")
    _untouched(release)
    # the card's export counts say the same when the manifest is gone too
    (release / "dataset" / "manifest.json").unlink()
    one_error_line(cli("baseline", str(release)), "train.json", "missing")
    _untouched(release)


def test_baseline_of_an_empty_train_split_is_refused(release):
    (release / "dataset" / "train.json").write_text("", encoding="utf-8")
    one_error_line(cli("baseline", str(release)), "train.json", "no items")
    _untouched(release)


# ------------------------------------------------------------------------------ deploy


def test_deploy_with_an_unreachable_prefect_server_names_its_address():
    url = f"http://127.0.0.1:{unused_port()}/api"
    one_error_line(cli("deploy", "recipes/sts-demo.yaml", env={"PREFECT_API_URL": url}),
                   f"PREFECT_API_URL={url}", "does not answer")  # fmt: skip


@pytest.mark.parametrize("url", ["notaurl", "127.0.0.1:4200/api", "ftp://127.0.0.1/api",
                                 "http://127.0.0.1:99999/api", "http:///api"])  # fmt: skip
def test_deploy_with_a_malformed_prefect_api_url_is_refused(url):
    one_error_line(cli("deploy", "recipes/sts-demo.yaml", env={"PREFECT_API_URL": url}),
                   f"PREFECT_API_URL={url!r}")  # fmt: skip


@pytest.mark.parametrize(
    ("args", "pieces"),
    [
        (["--cron", "61 * * * *"], ["--cron '61 * * * *'", "not a cron schedule"]),
        (["--cron", "every day"], ["--cron 'every day'"]),
        (["--cron", "* * * *"], ["--cron '* * * *'"]),
        (["--interval", "0"], ["--interval 0.0", "above 0"]),
        (["--interval", "-60"], ["--interval -60.0"]),
        (["--interval", "nan"], ["--interval nan"]),
        (["--interval", "1e300"], ["--interval 1e+300"]),
        (["--cron", "0 3 * * *", "--interval", "60"], ["one schedule, not both"]),
    ],
)
def test_deploy_checks_its_schedule_before_contacting_the_server(args, pieces):
    """The server named does not answer: the schedule's error comes first, so it is
    checked before any connection."""
    url = f"http://127.0.0.1:{unused_port()}/api"
    one_error_line(cli("deploy", "recipes/sts-demo.yaml", *args,
                       env={"PREFECT_API_URL": url}), *pieces)  # fmt: skip


# ------------------------------------------------------------------------ webhook serve


@pytest.mark.parametrize("port", ["99999", "0", "-1", "65536"])
def test_webhook_serve_refuses_a_port_out_of_range(port):
    got = cli("webhook", "serve", "--port", port, timeout=60)
    one_error_line(got, f"--port {port}", "not a port number (1-65535)")
    assert got.stdout == ""


def test_webhook_serve_refuses_a_bad_port_variable():
    got = cli("webhook", "serve", env={"BENCHFORGE_WEBHOOK_PORT": "80a"}, timeout=60)
    one_error_line(got, "BENCHFORGE_WEBHOOK_PORT=80a", "not a port number")


def test_webhook_serve_on_a_taken_port_names_it_before_printing_an_address(held_port):
    got = cli("webhook", "serve", "--port", str(held_port), "--poll", "0", timeout=60)
    one_error_line(got, f"port {held_port}", "already in use", "--port")
    assert "webhook endpoint on" not in got.stdout and got.stdout == ""
    assert "(unknown path)" not in got.stderr


def test_webhook_serve_refuses_a_poll_that_is_not_a_number_of_seconds():
    one_error_line(cli("webhook", "serve", "--poll", "nan", timeout=60), "--poll nan")
    one_error_line(cli("webhook", "serve", "--poll", "-5", timeout=60), "--poll -5")


def test_webhook_serve_on_a_free_port_prints_its_address_and_answers():
    port = unused_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "webhook", "serve", "--port", str(port), "--poll",
         "0"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        first = proc.stdout.readline()
        assert (
            first.strip() == f"benchforge webhook endpoint on http://127.0.0.1:{port}/label-studio"
        )
        with socket.create_connection(("127.0.0.1", port), timeout=10):
            pass
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_webhook_serve_stops_on_a_sigterm_that_lands_on_its_endpoint_thread():
    """A SIGTERM the kernel handed to the endpoint's thread, not the main one, left the
    main thread asleep in an hour-long wait: the command did not stop (3 of 12 runs of
    the test above under load). ``kill`` with a thread's id prefers that thread, so this
    sends the signal to a thread other than the main one."""
    port = unused_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "webhook", "serve", "--port", str(port), "--poll",
         "0"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout.readline().startswith("benchforge webhook endpoint on")
        with socket.create_connection(("127.0.0.1", port), timeout=10):
            pass  # the endpoint's thread is serving
        # the first thread after the main one: a native thread of a library (pyarrow's
        # allocator), which Python's own handler cannot wake the main thread from
        threads = sorted(int(t) for t in os.listdir(f"/proc/{proc.pid}/task"))
        threads.remove(proc.pid)
        assert threads
        os.kill(threads[0], signal.SIGTERM)
        assert proc.wait(timeout=30) == 130
    finally:
        proc.kill()
        proc.wait(timeout=30)


# ------------------------------------------------------------------- a release's splits


def test_a_translated_split_outside_the_releases_names_is_refused_at_load(tmp_path):
    """``translation.split: validation`` wrote validation.tsv, a split ``evaluate`` (and
    every loader of the layout) cannot find: only train, dev and test are accepted."""
    text = (ROOT / "recipes" / "kornli-demo.yaml").read_text(encoding="utf-8")
    text, changed = re.subn(r"\n  split: dev\b[^\n]*\n", "\n  split: validation\n", text, count=1)
    assert changed == 1
    recipe = tmp_path / "kornli.yaml"
    recipe.write_text(text.replace("../data/", f"{ROOT}/data/"), encoding="utf-8")
    out = tmp_path / "out"
    one_error_line(cli("rebuild", str(recipe), "--out", str(out)), str(recipe),
                   "translation.split", "'train', 'dev' or 'test'")  # fmt: skip
    assert not (out / "dataset").exists()


# ------------------------------------------------------------------ the MT step's progress

PARALLEL = ROOT / "data" / "demo" / "korsts" / "stsb-train-images.en-ko.tsv"


@pytest.fixture(scope="module")
def tiny_mt(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A Marian model trained by the MT step's trainer on 48 demo pairs, one epoch, with
    a progress line at every step (no terminal: the output is a pipe, as in a log)."""
    out = tmp_path_factory.mktemp("mt") / "model"
    got = cli("translators", "train", "--parallel", str(PARALLEL), "--out", str(out),
              "--limit", "48", "--epochs", "1", "--batch-size", "16", "--heldout", "4",
              "--vocab-size", "300", "--d-model", "32", "--layers", "1", "--heads", "2",
              "--ffn-dim", "64", "--device", "cpu",
              env={"BENCHFORGE_PROGRESS_SECONDS": "0"}, timeout=900)  # fmt: skip
    assert got.returncode == 0, got.stderr[-3000:]
    return out, got


def test_the_mt_trainer_shows_its_progress_without_a_terminal(tiny_mt):
    _, got = tiny_mt
    lines = got.stderr.splitlines()
    steps = [re.search(r" train mt: (\d+)/(\d+) steps \((done, )?", line) for line in lines]
    steps = [(int(m[1]), int(m[2]), bool(m[3])) for m in steps if m]
    total = steps[-1][1]
    assert total >= 2 and steps == [*((n, total, False) for n in range(1, total)),
                                     (total, total, True)], got.stderr[-3000:]  # fmt: skip
    assert any(" train mt: " in line and "epoch 1/1" in line for line in lines)
    assert any(" translate held-out: 4/4 sentences (done, " in line for line in lines)


def test_the_translator_shows_its_progress_without_a_terminal(tiny_mt, tmp_path, caplog,
                                                             monkeypatch):  # fmt: skip
    """The translate step's backend (the trained model behind the SQLite cache) and the
    translation memory each report sentences done."""
    import logging

    from pipelines.pairing.memory import TranslationMemory, translate_with_memory
    from pipelines.pairing.settings import TranslatorSpec
    from pipelines.pairing.translate import make_translator

    model, _ = tiny_mt
    monkeypatch.setenv("BENCHFORGE_PROGRESS_SECONDS", "0")
    caplog.set_level(logging.INFO)
    spec = TranslatorSpec(backend="transformers", model=str(model), device="cpu",
                          batch_size=2)  # fmt: skip
    translator = make_translator(spec, "/", tmp_path / "cache.sqlite")
    memory = TranslationMemory.load(PARALLEL, 90.0)
    texts = ["Quantum chromodynamics lectures begin at noon.", "Seventeen violins hum softly.",
             "The archivist catalogues medieval tax ledgers.", "Zebra crossings glow at dusk.",
             "A man is riding a horse."]  # fmt: skip
    frame = translate_with_memory(texts, memory, translator, "en", "ko")
    assert len(frame) == 5
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith(f"translation memory {PARALLEL.name}: 5/5 sentences (done, ")
               for m in messages), messages  # fmt: skip
    todo = int(frame["backend"].eq("transformers").sum())
    assert todo >= 3, frame  # four sentences no memory holds
    # two sentences a batch: a line after the first, one at the end
    assert any(m.startswith(f"translate en->ko: 2/{todo} sentences (") for m in messages)
    assert any(m.startswith(f"translate en->ko: {todo}/{todo} sentences (done, ")
               for m in messages), messages  # fmt: skip
