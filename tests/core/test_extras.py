"""The crowd, Ray, Hugging Face and lexicon-build stacks are extras: a command that needs a missing
one exits 2 naming it, and the core commands run without any of them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.resources import sample_dir

# The top-level modules each extra installs (and nothing in the core imports at run time).
EXTRA_MODULES = {
    "crowd": ("crowdkit", "statsmodels", "pandas", "sklearn", "jinja2"),
    "ray": ("ray",),
    "hf": ("datasets",),
    "lexicon": ("nltk", "spacy", "spacy_lookups_data"),
}


def _without(monkeypatch, *modules: str) -> None:
    """Make `import m` fail for each of `modules`, as in an install without them."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def _refused(result, extra: str) -> None:
    assert result.exit_code == 2, result.output
    assert f"pip install 'contrastgen[{extra}]'" in result.output, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("module", EXTRA_MODULES["crowd"])
def test_mturk_ingest_names_the_crowd_extra(tmp_path, monkeypatch, module):
    _without(monkeypatch, module)
    result = CliRunner().invoke(cli, ["mturk", "ingest", "--manifest", str(tmp_path / "manifest.json"),
                                      "--results", str(tmp_path / "results.csv"), "--out", str(tmp_path / "report")])
    _refused(result, "crowd")
    assert module in result.output
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize("command", [["export", "--contrast", "C", "--images-base-url", "https://h/i", "--sample", "1"],
                                     ["preview", "HITS"], ["simulate", "HITS"]])
def test_the_other_mturk_commands_name_the_crowd_extra(tmp_path, monkeypatch, command):
    _without(monkeypatch, "jinja2")
    result = CliRunner().invoke(cli, ["mturk", *command, "--out", str(tmp_path / "out")])
    _refused(result, "crowd")
    assert not (tmp_path / "out").exists()


def test_export_hf_names_the_hf_extra(tmp_path, monkeypatch):
    _without(monkeypatch, "datasets")
    result = CliRunner().invoke(cli, ["export", str(tmp_path), "--format", "hf", "--out", str(tmp_path / "hf")])
    _refused(result, "hf")
    assert not (tmp_path / "hf").exists()


@pytest.mark.parametrize("command", ["generate", "augment"])
def test_backend_ray_names_the_ray_extra(tmp_path, monkeypatch, command):
    _without(monkeypatch, "ray")
    sample = sample_dir()
    out = tmp_path / ("out" if command == "generate" else "train.json")
    result = CliRunner().invoke(cli, [command, "--questions", str(sample / "questions.json"),
                                      "--scene-graphs", str(sample / "scene_graphs.json"),
                                      "--out", str(out), "--backend", "ray"])
    _refused(result, "ray")
    assert not out.exists()


def test_ood_vqavs_backend_ray_names_the_ray_extra(tmp_path, monkeypatch):
    _without(monkeypatch, "ray")
    sample = sample_dir()
    result = CliRunner().invoke(cli, ["ood", "vqavs", "--questions", str(sample / "questions.json"),
                                      "--objects", str(sample / "scene_graphs.json"),
                                      "--out", str(tmp_path / "vqavs"), "--backend", "ray"])
    _refused(result, "ray")
    assert not (tmp_path / "vqavs").exists()


@pytest.mark.parametrize("module", EXTRA_MODULES["lexicon"])
def test_lexicon_build_names_the_lexicon_extra(tmp_path, monkeypatch, module):
    _without(monkeypatch, module)
    result = CliRunner().invoke(cli, ["lexicon", "build", "--vocab", str(tmp_path), "--wordnet", str(tmp_path),
                                      "--out", str(tmp_path / "out")])
    _refused(result, "lexicon")
    assert not (tmp_path / "out").exists()


def test_the_demo_runs_on_the_core_install_alone(tmp_path):
    """`make demo` installs the core only: generate, verify and evaluate, on GQA and CLEVR data,
    import nothing an extra brings (run in a fresh interpreter where those imports fail)."""
    blocked = sorted(m for modules in EXTRA_MODULES.values() for m in modules)
    script = textwrap.dedent(f"""
        import importlib.abc, sys
        BLOCKED = {blocked!r}

        class NoExtras(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ModuleNotFoundError(f"{{name}} is an extra", name=name)
                return None

        sys.meta_path.insert(0, NoExtras())
        from contrastgen.cli import main
        main(["demo", "--out", sys.argv[1]])
    """)
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path / "demo")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    assert "0 failed" in run.stdout
    assert (tmp_path / "demo" / "evaluation" / "report" / "report.json").is_file()
    assert (tmp_path / "demo" / "clevr" / "evaluation" / "report" / "report.json").is_file()
