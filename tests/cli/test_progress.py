"""The progress bar of every long command (contrastgen.terminal.progress): drawn on stderr when
stderr is a terminal, never otherwise, off with `--no-progress`, and never in an output.

The terminal is simulated two ways: in process, by forcing the helper's "is stderr a terminal"
decision (rich then prints the finished bar once to CliRunner's stderr); end to end, by running
the command on a real pseudo-terminal (`pty`)."""

from __future__ import annotations

import io
import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.resources import clevr_sample_dir, sample_dir
from contrastgen.terminal import progress as progress_module

QUESTIONS, GRAPHS = sample_dir() / "questions.json", sample_dir() / "scene_graphs.json"
CLEVR = clevr_sample_dir()


def _generated(out: Path) -> Path:
    res = CliRunner().invoke(cli, ["generate", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS),
                                   "--out", str(out), "--workers", "1", "--no-progress"])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def contrast(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _generated(tmp_path_factory.mktemp("progress") / "cs")


@pytest.fixture(scope="module")
def vqa(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """VQA v2 questions and annotations (one question type, answers 3 to 1): `ood vqavs` builds
    those in this process."""
    folder = tmp_path_factory.mktemp("vqa")
    questions = [{"image_id": i, "question": f"What color is the wall {i}?", "question_id": 1000 + i}
                 for i in range(12)]
    annotations = [{"question_id": 1000 + i, "image_id": i, "answer_type": "other",
                    "multiple_choice_answer": (answer := "red" if i % 4 == 0 else "white"),
                    "answers": [{"answer": answer, "answer_confidence": "yes", "answer_id": j} for j in range(1, 11)]}
                   for i in range(12)]
    (folder / "q.json").write_text(json.dumps(questions))
    (folder / "a.json").write_text(json.dumps(annotations))
    return folder / "q.json", folder / "a.json"


@pytest.fixture(scope="module")
def captions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("progress") / "captions"
    res = CliRunner().invoke(cli, ["captions", "generate", "--scene-graphs", str(GRAPHS), "--out", str(out),
                                   "--workers", "1", "--no-progress"])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory, contrast: Path, captions: Path) -> dict[str, str]:
    """What `evaluate` and the harness exports read: a model's predictions on the contrast set,
    a GQA-OOD directory, caption similarities, and a CLEVR contrast set whose records name their
    images (the harness exports need the images)."""
    folder = tmp_path_factory.mktemp("scored")
    runner = CliRunner()
    for args in (["baseline", "--kind", "constant", "--answer", "yes", "--questions", str(contrast / "augmented.json"),
                  "--out", str(folder / "yes.json")],
                 ["ood", "gqa", "--questions", str(QUESTIONS), "--out", str(folder / "ood"), "--no-progress"],
                 ["generate", "--questions", str(CLEVR / "questions"), "--scene-graphs", str(CLEVR / "scenes"),
                  "--images", str(CLEVR / "images"), "--out", str(folder / "clevr"), "--workers", "1", "--no-progress"]):
        res = runner.invoke(cli, args)
        assert res.exit_code == 0, (args, res.output)
    rows = ["image_id,caption_id,score"]
    for n, line in enumerate((captions / "captions.jsonl").read_text().splitlines()):
        record = json.loads(line)
        rows += [f"{record['image_id']},{record['id']},{n % 7 / 7}",
                 *(f"{record['image_id']},{neg['id']},{(n + i + 3) % 7 / 7}"
                   for i, neg in enumerate(record["negatives"]))]
    (folder / "sims.csv").write_text("\n".join(rows) + "\n")
    return {"pred": str(folder / "yes.json"), "ood": str(folder / "ood"), "sims": str(folder / "sims.csv"),
            "clevr": str(folder / "clevr")}


# Each long command with inputs, the bar's description, and the output it writes (None: stdout
# alone). `{out}` is the output path, `{cs}` a generated contrast set, `{cap}` a caption set,
# `{vq}` and `{va}` VQA v2 questions and annotations; `{pred}`, `{ood}`, `{sims}` and `{clevr}`
# are the `scored` fixture's.
COMMANDS: dict[str, tuple[list[str], str, str | None]] = {
    "generate": (["generate", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS), "--out", "{out}",
                  "--workers", "1"], "generating", "{out}"),
    "augment": (["augment", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS), "--out", "{out}/a.json",
                 "--workers", "1"], "generating", "{out}"),
    "verify": (["verify", "{cs}", "--scene-graphs", str(GRAPHS), "--json"], "verifying", None),
    "verify captions": (["verify", "{cap}", "--scene-graphs", str(GRAPHS), "--json"], "verifying captions", None),
    "captions generate": (["captions", "generate", "--scene-graphs", str(GRAPHS), "--out", "{out}",
                           "--workers", "1"], "captioning", "{out}"),
    "export": (["export", "{cs}", "--format", "jsonl", "--out", "{out}"], "exporting", "{out}"),
    "ood gqa": (["ood", "gqa", "--questions", str(QUESTIONS), "--out", "{out}"], "placing questions", "{out}"),
    "ood vqavs": (["ood", "vqavs", "--questions", str(QUESTIONS), "--out", "{out}", "--workers", "1"],
                  "labelling questions", "{out}"),
    "ood vqavs (VQA v2)": (["ood", "vqavs", "--questions", "{vq}", "--annotations", "{va}", "--out", "{out}"],
                           "labelling questions", "{out}"),
    "ood superclevr": (["ood", "superclevr", "--scenes", str(CLEVR / "scenes"), "--questions",
                        str(CLEVR / "questions" / "superCLEVR_questions_5.json"), "--out", "{out}"],
                       "splitting questions", "{out}"),
    "ood gqa-redundancy": (["ood", "gqa-redundancy", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS),
                            "--out", "{out}"], "climbing ladders", "{out}"),
    "evaluate --contrast": (["evaluate", "--contrast", "{cs}", "-p", "{pred}", "-p", "again={pred}", "--n-boot", "50",
                             "--out", "{out}"], "evaluating contrast sets", "{out}"),
    "evaluate --questions": (["evaluate", "--questions", str(QUESTIONS), "-p", "{pred}", "--n-boot", "50",
                              "--out", "{out}"], "evaluating GQA metrics", "{out}"),
    "evaluate --ood": (["evaluate", "--ood", "{ood}", "-p", "{pred}", "--out", "{out}"], "scoring models", "{out}"),
    "evaluate --captions": (["evaluate", "--captions", "{cap}", "-p", "clip={sims}", "--n-boot", "50",
                             "--out", "{out}"], "evaluating captions", "{out}"),
    "export lmms-eval": (["export", "{clevr}", "--format", "lmms-eval", "--out", "{out}"], "exporting", "{out}"),
    "export vlmevalkit": (["export", "{clevr}", "--format", "vlmevalkit", "--out", "{out}"], "exporting", "{out}"),
    "baseline oracle": (["baseline", "--kind", "oracle", "--questions", "{cs}/augmented.json", "--scene-graphs",
                         str(GRAPHS), "--out", "{out}/oracle.json"], "answering questions", "{out}"),
    "baseline prior": (["baseline", "--kind", "prior", "--questions", "{cs}/augmented.json", "--out",
                        "{out}/prior.json"], "fitting and answering", "{out}"),
    "captions baselines": (["captions", "baselines", "{cap}", "--json"], "cross-validating", None),
    "mturk export": (["mturk", "export", "--contrast", "{cs}", "--sample", "20", "--images-base-url",
                      "https://images.example.org", "--out", "{out}"], "reading contrast sets", "{out}"),
    "captions export sugarcrepe": (["captions", "export", "{cap}", "--format", "sugarcrepe", "--out", "{out}"],
                                   "exporting captions", "{out}"),
    "captions export negclip": (["captions", "export", "{cap}", "--format", "negclip", "--out", "{out}"],
                                "exporting captions", "{out}"),
    "view --static": (["view", "{cs}", "--scene-graphs", str(GRAPHS), "--predictions", "yes={pred}", "--static",
                       "{out}"], "building the viewer", "{out}"),
}


def _args(name: str, out: Path, contrast: Path, captions: Path, vqa: tuple[Path, Path], scored: dict[str, str]
          ) -> tuple[list[str], str, Path | None]:
    args, description, written = COMMANDS[name]
    fill = {"out": str(out), "cs": str(contrast), "cap": str(captions), "vq": str(vqa[0]), "va": str(vqa[1]),
            **scored}
    return [a.format(**fill) for a in args], description, None if written is None else Path(written.format(**fill))


def _files(folder: Path | None) -> dict[str, bytes]:
    if folder is None:
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_long_command_draws_its_bar_on_a_terminal_and_writes_the_same(name, tmp_path, monkeypatch,
                                                                           contrast, captions, vqa, scored):
    """On a terminal the bar's description reaches stderr; with --no-progress, or off a
    terminal, nothing of it does; stdout and every output file are byte-identical in all three."""
    runs = {}
    for mode in ("terminal", "no-progress", "pipe"):
        monkeypatch.setattr(progress_module, "on_terminal", lambda mode=mode: mode != "pipe")
        shutil.rmtree(tmp_path / "out", ignore_errors=True)  # one path for all three: stdout names it
        args, description, written = _args(name, tmp_path / "out", contrast, captions, vqa, scored)
        res = CliRunner().invoke(cli, args + (["--no-progress"] if mode == "no-progress" else []))
        assert res.exit_code == 0, (mode, res.output, res.stderr)
        runs[mode] = (res.stdout, res.stderr, _files(written))
    assert description in runs["terminal"][1]
    for mode in ("no-progress", "pipe"):
        assert description not in runs[mode][1], mode
        assert runs[mode][0] == runs["terminal"][0], mode
        assert runs[mode][2] == runs["terminal"][2], mode
    assert description not in runs["terminal"][0]  # never on stdout


def test_every_long_command_documents_no_progress():
    """Each command that can run over a minute takes --no-progress and says so in --help."""
    for args in (["generate"], ["augment"], ["verify"], ["captions", "generate"], ["export"], ["ood", "gqa"],
                 ["ood", "vqavs"], ["ood", "superclevr"], ["ood", "gqa-redundancy"], ["evaluate"], ["baseline"],
                 ["captions", "baselines"], ["view"], ["mturk", "export"],
                 ["captions", "export"]):
        res = CliRunner().invoke(cli, [*args, "--help"])
        assert res.exit_code == 0 and "--no-progress" in res.output, args


def test_the_helper_is_a_no_op_off_a_terminal(monkeypatch, capsys):
    """Off a terminal (or disabled) `progress` yields the shared no-op and prints nothing; the
    total, when a function, is not even computed."""
    monkeypatch.setattr(progress_module, "on_terminal", lambda: False)

    def total() -> int:
        raise AssertionError("the total of a bar nobody sees was computed")

    with progress_module.progress("quiet", total) as advance:
        advance(3)
    assert advance is progress_module.noop
    monkeypatch.setattr(progress_module, "on_terminal", lambda: True)
    with progress_module.progress("quiet", total, enabled=False) as advance:
        advance(1)
    assert advance is progress_module.noop
    captured = capsys.readouterr()
    assert captured.out == captured.err == ""


def test_the_helper_draws_on_stderr_only(monkeypatch):
    """On a terminal the bar counts to its total on stderr; stdout, even written to during the
    bar, stays stdout's alone."""
    monkeypatch.setattr(progress_module, "on_terminal", lambda: True)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    with progress_module.progress("counting things", lambda: 4) as advance:
        for item in progress_module.counted(["a", "b", "c", "d"], advance):
            print(item)
    assert out.getvalue() == "a\nb\nc\nd\n"
    assert "counting things" in err.getvalue() and "4/4" in err.getvalue()


def test_on_terminal_follows_rich(monkeypatch):
    """The decision is rich's: off a tty no bar; TTY_COMPATIBLE=1 makes a terminal of a pipe, but
    not a dumb one, and TTY_INTERACTIVE=0 says nobody watches."""
    for name in ("TTY_COMPATIBLE", "TTY_INTERACTIVE", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not progress_module.on_terminal()
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert progress_module.on_terminal()
    monkeypatch.setenv("TTY_INTERACTIVE", "0")
    assert not progress_module.on_terminal()
    monkeypatch.delenv("TTY_INTERACTIVE")
    monkeypatch.setenv("TERM", "dumb")
    assert not progress_module.on_terminal()


def test_off_a_terminal_rich_is_not_even_imported():
    """A piped run decides "no bar" without importing rich: the off path costs nothing."""
    code = ("import sys; from contrastgen.terminal.progress import on_terminal, progress\n"
            "with progress('x', 3) as advance: advance(1)\n"
            "assert not on_terminal() and 'rich' not in sys.modules, sorted(sys.modules)")
    env = {k: v for k, v in os.environ.items() if k not in ("TTY_COMPATIBLE", "TTY_INTERACTIVE", "FORCE_COLOR")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env)
    assert done.returncode == 0, done.stderr.decode()[-500:]


def test_line_count_counts_a_last_line_without_its_newline(tmp_path):
    for text, n in ((b"", 0), (b"{}\n", 1), (b"{}\n{}", 2), (b"{}\n{}\n", 2)):
        (tmp_path / "f").write_bytes(text)
        assert progress_module.line_count(tmp_path / "f")() == n


def _on_pty(args: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
    """Run `contrastgen ARGS` with stderr on a pseudo-terminal and stdout on a pipe: its exit
    code, stdout and what the terminal showed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "contrastgen", *args], stdout=subprocess.PIPE,
                            stderr=follower, stdin=subprocess.DEVNULL, env=env)
    os.close(follower)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the command closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    stdout = proc.stdout.read() if proc.stdout else b""
    return proc.wait(timeout=120), stdout, bytes(shown)


def test_verify_on_a_real_terminal_shows_the_bar_and_prints_the_same(contrast):
    """End to end on a pseudo-terminal: `verify` draws its bar there, not with --no-progress, and
    its report on stdout is the same byte for byte."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    env["TERM"] = "xterm"
    args = ["verify", str(contrast), "--scene-graphs", str(GRAPHS), "--json"]
    code, stdout, shown = _on_pty(args, env)
    assert code == 0, shown
    assert b"verifying" in shown
    code, quiet_stdout, quiet_shown = _on_pty([*args, "--no-progress"], env)
    assert code == 0 and b"verifying" not in quiet_shown
    assert stdout == quiet_stdout and b'"ok":true' in stdout
    piped = subprocess.run([sys.executable, "-m", "contrastgen", *args], capture_output=True, env=env, check=True)
    assert piped.stdout == stdout and b"verifying" not in piped.stderr


@pytest.mark.parametrize("mode", ["--contrast", "export lmms-eval"])
def test_evaluate_and_the_harness_export_on_a_real_terminal(mode, contrast, scored, tmp_path):
    """End to end on a pseudo-terminal: `evaluate` and a harness export draw their bar there, not
    with --no-progress nor piped, and print the same on stdout in all three."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    env["TERM"] = "xterm"
    if mode == "--contrast":
        args, description = ["evaluate", "--contrast", str(contrast), "-p", scored["pred"], "--n-boot", "50"], \
            b"evaluating contrast sets"
    else:
        args, description = ["export", scored["clevr"], "--format", "lmms-eval", "--out", str(tmp_path / "task")], \
            b"exporting"
    code, stdout, shown = _on_pty(args, env)
    assert code == 0, shown
    assert description in shown
    code, quiet_stdout, quiet_shown = _on_pty([*args, "--no-progress"], env)
    assert code == 0 and description not in quiet_shown
    piped = subprocess.run([sys.executable, "-m", "contrastgen", *args], capture_output=True, env=env, check=True)
    assert piped.stdout == stdout == quiet_stdout and description not in piped.stderr
