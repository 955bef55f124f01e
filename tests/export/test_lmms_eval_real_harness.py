"""The whole loop with the real lmms-eval, when it is installed: export a task, run
`python -m lmms_eval` with its OpenAI-compatible model against a server on 127.0.0.1 that answers
every question with the scene-graph oracle's answer, and score the samples log.

lmms-eval needs torch, so it is no dependency of the tests: the test runs when `lmms_eval` is
importable, or when LMMS_EVAL_PYTHON names the Python of an environment that has it (lmms-eval
kept apart from contrastgen's); else it is skipped. The server answers from what a request holds (the image's pixels and the prompt), never from the
order requests arrive in: lmms-eval sends them concurrently and sorted by prompt.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

LMMS_PYTHON = sys.executable if importlib.util.find_spec("lmms_eval") else os.environ.get("LMMS_EVAL_PYTHON")
pytestmark = pytest.mark.skipif(not LMMS_PYTHON,
                                reason="lmms_eval is not installed (it needs torch): `pip install lmms-eval`, "
                                       "or LMMS_EVAL_PYTHON=<python of an environment with it>, runs the whole loop")

POST_PROMPT = "\nAnswer the question using a single word or phrase."


def pixels(image) -> str:
    return hashlib.sha256(image.convert("RGB").tobytes()).hexdigest()


def oracle_answers(task_folder: Path) -> dict[tuple[str, str], str]:
    """(image pixels, prompt) -> gold answer, for every row of the exported task."""
    import datasets
    from PIL import Image

    rows = datasets.load_dataset("parquet", data_files=str(task_folder / "data" / "test.parquet"),
                                 split="train", cache_dir=str(task_folder.parent / "oracle-cache"))
    out = {}
    for row in rows:
        image = Image.open(io.BytesIO(row["image"]["bytes"])) if isinstance(row["image"], dict) else row["image"]
        out[(pixels(image), row["question"] + POST_PROMPT)] = row["answer"]
    return out


class OracleHandler(BaseHTTPRequestHandler):
    answers: dict[tuple[str, str], str] = {}
    served: list[str] = []
    noisy = False

    def log_message(self, *args) -> None:  # keep the test's output clean
        pass

    def do_POST(self) -> None:
        from PIL import Image

        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        content = body["messages"][-1]["content"]
        text = next(part["text"] for part in content if part.get("type") == "text")
        url = next(part["image_url"]["url"] for part in content if part.get("type") == "image_url")
        image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
        answer = self.answers.get((pixels(image), text), "unknown")
        if self.noisy and int(hashlib.sha256(text.encode() + url[-64:].encode()).hexdigest(), 16) % 3 == 0:
            answer = "yes"  # wrong on some questions, from what the request holds, never its order
        self.served.append(answer)
        payload = json.dumps({
            "id": f"chatcmpl-{len(self.served)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake-vlm"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def run_lmms_eval(export, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    """`python -m lmms_eval` on the exported task against the handler's server, as a user runs it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), OracleHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    said = subprocess.run([LMMS_PYTHON, "-c", "import importlib.metadata as m; print(m.version('lmms_eval'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    version = tuple(int(p) for p in said.split(".")[:2] if p.isdigit())
    model = "openai" if version >= (0, 6) else "openai_compatible"  # renamed in 0.6
    env = {**os.environ, "OPENAI_API_KEY": "not-a-key", "OPENAI_API_BASE": base_url,
           "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    try:
        return subprocess.run(
            [LMMS_PYTHON, "-m", "lmms_eval", "--model", model,
             "--model_args", f"model_version=fake-vlm,base_url={base_url}",
             "--include_path", str(export.out), "--tasks", export.names[0],
             "--output_path", str(tmp_path / "results"), "--log_samples", *extra],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    finally:
        server.shutdown()


def test_a_limited_run_scores_back_to_lmms_eval_s_own_figures_through_a_quoted_glob(clevr_output, tmp_path):
    """`--limit 60` with a model wrong on about a third: `evaluate -p m='results/*/*_samples_...'`
    (the pattern as the README writes it) gives every figure lmms-eval reports."""
    import math

    from click.testing import CliRunner

    from contrastgen.cli import cli
    from contrastgen.export.lmms_eval import export_lmms_eval
    from contrastgen.export.lmms_eval_task import metric_slug
    from contrastgen.resources import clevr_sample_dir

    export = export_lmms_eval(clevr_output, tmp_path / "task", name="clevr_limit", images=clevr_sample_dir() / "images")
    OracleHandler.answers, OracleHandler.served, OracleHandler.noisy = oracle_answers(export.out), [], True
    try:
        done = run_lmms_eval(export, tmp_path, "--limit", "60")
    finally:
        OracleHandler.noisy = False
    assert done.returncode == 0, done.stderr[-3000:]
    (results_file,) = (tmp_path / "results").rglob("*_results.json")
    results = json.loads(results_file.read_text())["results"][export.names[0]]
    theirs = {k.split(",")[0]: v for k, v in results.items() if "," in k and "_stderr" not in k}
    result = CliRunner().invoke(cli, ["evaluate", "--contrast", str(clevr_output), "--n-boot", "0",
                                      "--out", str(tmp_path / "report"),
                                      "-p", f"m={tmp_path}/results/*/*_samples_{export.names[0]}.jsonl"])
    assert result.exit_code == 0, result.output
    assert "partial run" in " ".join(result.output.split())
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    figures = report["results"]["m"][str(max(report["settings"]["ks"]))]
    ours = {m: figures["overall"][m]["value"] for m in ("original_accuracy", "perturbed_accuracy", "drop", "consistency")}
    for breakdown, dimension in (("by_template", "template"), ("by_question_type", "type"), ("by_kind", "kind")):
        for value, metrics in figures[breakdown].items():
            for m in ("original_accuracy", "perturbed_accuracy", "consistency"):
                ours[f"{m}_{dimension}_{metric_slug(value)}"] = metrics[m]["value"]
    compared = 0
    for name, value in theirs.items():
        if name in ours and isinstance(value, (int, float)) and not math.isnan(value):
            assert ours[name] == pytest.approx(value, abs=1e-6), name
            compared += 1
    assert compared >= 4 and 0 < ours["consistency"] < 1


def test_lmms_eval_scores_the_oracle_100_percent_through_an_openai_compatible_server(clevr_output, tmp_path):
    from contrastgen.evaluation.contrast import evaluate_contrast
    from contrastgen.evaluation.predictions import load_predictions
    from contrastgen.export.lmms_eval import export_lmms_eval
    from contrastgen.records import load_contrast_records
    from contrastgen.resources import clevr_sample_dir

    export = export_lmms_eval(clevr_output, tmp_path / "task", name="clevr_loop", images=clevr_sample_dir() / "images")
    OracleHandler.answers, OracleHandler.served = oracle_answers(export.out), []
    done = run_lmms_eval(export, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(OracleHandler.served) >= export.questions and "unknown" not in OracleHandler.served
    (results_file,) = (tmp_path / "results").rglob("*_results.json")
    results = json.loads(results_file.read_text())["results"][export.names[0]]
    scores = {k.split(",")[0]: v for k, v in results.items() if "," in k and "_stderr" not in k}
    assert scores and all(v == (0.0 if k.startswith("drop") else 1.0) for k, v in scores.items()), scores
    (samples,) = (tmp_path / "results").rglob(f"*_samples_{export.names[0]}.jsonl")
    report = evaluate_contrast(load_contrast_records(clevr_output), {"lmms": load_predictions(samples)}, n_boot=0)
    k = str(max(report["settings"]["ks"]))
    assert report["results"]["lmms"][k]["overall"]["consistency"]["value"] == 1.0
