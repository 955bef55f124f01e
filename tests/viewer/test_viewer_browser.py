"""The viewer in a real headless Chromium (Debian's), opened from disk as a shared static site.

Skips with a reason where no chromium is installed; `.ci/run` installs Debian's `chromium`
before `make test`, so CI runs it. The README's screenshot is written by
`test_the_first_set_shows_its_image_boxes_and_evidence` when CONTRASTGEN_SCREENSHOT names a file
(`make screenshot`).
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import orjson
import pytest
from cdp_pipe import PipeBrowser, find_chromium
from PIL import Image

from contrastgen.answers import normalize_answer
from contrastgen.cli.view_cmds import build_site

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
MAGENTA = (255, 0, 255)
BLUE = (0, 160, 255)


@pytest.fixture(scope="module")
def site(sample_output, tmp_path_factory):
    site = tmp_path_factory.mktemp("site") / "site"
    index, _ = build_site(sample_output["out"], site, scene_graphs=sample_output["scene_graphs"],
                          predictions=(f"always-yes={sample_output['predictions']}",), review=None,
                          images=str(sample_output["images"]), served=False)
    return index


@pytest.fixture()
def browser(tmp_path):
    b = PipeBrowser(CHROMIUM, tmp_path / "chromium-profile")
    yield b
    b.close()


def _ready(browser, session, check: str) -> object:
    """Wait (in the page) until `check` is truthy; returns its value."""
    return browser.evaluate(session, f"""
        new Promise((resolve, reject) => {{
          const t0 = Date.now();
          const poll = () => {{
            let v; try {{ v = {check}; }} catch (e) {{ v = null; }}
            if (v) resolve(v); else if (Date.now() - t0 > 20000) reject(new Error("timeout: {check}"));
            else setTimeout(poll, 25);
          }};
          poll();
        }})""")


def _records(sample_output) -> list[dict]:
    return [orjson.loads(line) for line in (sample_output["out"] / "contrast_sets.jsonl").read_bytes().splitlines()]


def test_the_first_set_shows_its_image_boxes_and_evidence(site, browser, sample_output):
    session = browser.open_page(site.as_uri())
    browser.set_window(session, 1280, 900)
    _ready(browser, session, "document.querySelector('.figure[data-loaded] svg rect.box')")
    first = _records(sample_output)[0]
    shown = browser.evaluate(session, """({
        set: document.getElementById('detail').dataset.set,
        questions: [...document.querySelectorAll('.q')].map(q => q.firstChild.textContent),
        marks: [...document.querySelectorAll('.q mark')].map(m => m.textContent),
        facts: document.querySelectorAll('.facts li').length,
        labels: [...document.querySelectorAll('svg text.label')].map(t => t.textContent),
        original: document.querySelector('svg rect.box').classList.contains('original'),
        box: (() => { const r = document.querySelector('svg rect.box').getBoundingClientRect();
                      return [r.left, r.top, r.width, r.height]; })(),
    })""")
    assert shown["set"] == first["question_id"]
    assert shown["questions"][0].startswith(first["question"])
    assert len(shown["questions"]) == 1 + len(first["perturbations"])
    assert shown["marks"] and all(m for m in shown["marks"])  # each perturbation's changed words
    assert shown["facts"] >= len(first["perturbations"])
    assert shown["labels"]
    # the box's left edge, half-way down, is drawn in the box colour on the grey image
    png = browser.screenshot(session)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    left, top, width, height = shown["box"]
    x, y = round(left), round(top + height / 2)
    near = [image.getpixel((x + dx, y)) for dx in (-1, 0, 1)]
    colour = BLUE if shown["original"] else MAGENTA  # the original's object, or one the evidence names
    assert any(sum(abs(a - b) for a, b in zip(px, colour, strict=True)) < 60 for px in near), near
    assert image.getpixel((round(left + width / 2), round(top + height / 2)))[1] > 60  # not filled
    assert browser.errors() == []
    target = os.environ.get("CONTRASTGEN_SCREENSHOT")
    if target:
        Path(target).write_bytes(png)


def test_filters_change_the_list_and_the_url_keeps_them(site, browser, sample_output):
    session = browser.open_page(site.as_uri())
    _ready(browser, session, "CG.rows && CG.list")
    total = browser.evaluate(session, "CG.list.length")
    records = _records(sample_output)
    assert total == len(records)
    # by change kind: relation
    kinds = browser.evaluate(session, "CG.manifest.filters.change")
    browser.evaluate(session, f"""(() => {{ const s = document.getElementById('f-change');
        s.value = '{kinds.index("relation")}'; s.dispatchEvent(new Event('change')); }})()""")
    listed = browser.evaluate(session, "CG.list")
    expected = [i for i, r in enumerate(records)
                if any(p["change"]["kind"] == "relation" for p in r["perturbations"])]
    assert listed == expected and 0 < len(listed) < total
    # the URL holds the filter and the position: a new tab on it shows the same list and set
    browser.evaluate(session, "go(1)")
    url = browser.evaluate(session, "location.href")
    assert "c=" in url and "i=1" in url
    again = browser.open_page(url)
    _ready(browser, again, "CG.list && document.getElementById('detail').dataset.index")
    assert browser.evaluate(again, "CG.list") == expected
    assert browser.evaluate(again, "document.getElementById('detail').dataset.index") == str(expected[1])
    # search: only sets whose words contain the term
    browser.evaluate(again, """(() => { const s = document.getElementById('f-search');
        s.value = 'left'; s.dispatchEvent(new Event('input')); })()""")
    found = browser.evaluate(again, "CG.list")
    assert found and all("left" in (r["question"] + " ".join(p["question"] for p in r["perturbations"])).lower()
                         for r in (records[i] for i in found))
    assert browser.errors() == []


def test_a_failing_models_filter_shows_only_its_failures(site, browser, sample_output):
    session = browser.open_page(site.as_uri() + "#m=0")
    _ready(browser, session, "CG.rows && CG.list")
    preds = json.loads(sample_output["predictions"].read_text())
    records = _records(sample_output)

    def fails(rec):
        pairs = [(rec["question_id"], rec["answer"])] + [(p["question_id"], p["answer"]) for p in rec["perturbations"]]
        return any(normalize_answer(preds[q]) != normalize_answer(a) for q, a in pairs)

    expected = [i for i, r in enumerate(records) if fails(r)]
    assert browser.evaluate(session, "CG.list") == expected
    assert 0 < len(expected) < len(records)
    _ready(browser, session, "document.querySelector('.model')")
    assert browser.evaluate(session, "document.querySelectorAll('.model.wrong').length") >= 1
    # keyboard: j moves to the next failing set
    first = browser.evaluate(session, "document.getElementById('detail').dataset.index")
    assert first == str(expected[0])
    browser.send("Page.bringToFront", session=session)
    browser.send("Emulation.setFocusEmulationEnabled", {"enabled": True}, session=session)
    key = {"key": "j", "code": "KeyJ", "windowsVirtualKeyCode": 74, "nativeVirtualKeyCode": 74}
    browser.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": "j", **key}, session=session)
    browser.send("Input.dispatchKeyEvent", {"type": "keyUp", **key}, session=session)
    moved = _ready(browser, session, f"(d => d !== '{first}' && d)(document.getElementById('detail').dataset.index)")
    assert moved == str(expected[1])
    assert browser.errors() == []


def test_without_an_image_the_scene_graph_is_drawn(sample_output, browser, tmp_path):
    index, _ = build_site(sample_output["out"], tmp_path / "site", scene_graphs=sample_output["scene_graphs"],
                          predictions=(), review=None, images=None, served=False)
    session = browser.open_page(index.as_uri())
    drawn = _ready(browser, session, "document.querySelectorAll('svg.drawing rect').length")
    assert drawn >= 1
    assert browser.evaluate(session, "document.querySelectorAll('svg.drawing rect.box:not(.other)').length") >= 1
    assert browser.errors() == []


def _most_labels(sample_output) -> int:
    """The index of the set whose picture labels the most objects (the original's and the evidence's)."""
    from contrastgen.viewer.bundle import ViewerInputs, view_set

    graphs = orjson.loads(sample_output["scene_graphs"].read_bytes())
    inputs = ViewerInputs(records=_records(sample_output), scene_graphs=graphs)
    counts = [len(set(v["marked"]) | set(v["original_objects"])) for v in map(lambda r: view_set(r, inputs),
                                                                              inputs.records)]
    return max(range(len(counts)), key=lambda i: (counts[i], -i))


def test_the_originals_object_is_boxed_and_no_two_labels_overlap(site, browser, sample_output):
    index = _most_labels(sample_output)
    session = browser.open_page(site.as_uri() + f"#i={index}")
    browser.set_window(session, 1280, 900)
    _ready(browser, session, f"document.getElementById('detail').dataset.index === '{index}' && "
                             "document.querySelector('.figure[data-loaded] svg text.label')")
    shown = browser.evaluate(session, """({
        labels: [...document.querySelectorAll('svg text.label')].map(t => {
            const r = t.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }),
        original: [...document.querySelectorAll('svg rect.box.original')].map(r => r.dataset.object),
        box: (() => { const e = document.querySelector('svg rect.box.original');
                      if (!e) return null; const r = e.getBoundingClientRect();
                      return [r.left, r.top, r.width, r.height]; })(),
    })""")
    assert len(shown["labels"]) >= 3
    for i, a in enumerate(shown["labels"]):
        for b in shown["labels"][i + 1:]:
            overlap = min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1
            assert not overlap, (a, b)
    from contrastgen.viewer.words import original_objects
    assert shown["original"] and set(shown["original"]) <= set(original_objects(_records(sample_output)[index]))
    png = browser.screenshot(session)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    left, top, width, height = shown["box"]
    near = [image.getpixel((round(left) + dx, round(top + height / 2))) for dx in (-1, 0, 1)]
    assert any(sum(abs(a - b) for a, b in zip(px, BLUE, strict=True)) < 60 for px in near), near
    assert browser.errors() == []


def test_each_perturbation_shows_its_edited_program_with_the_changed_step_marked(site, browser, sample_output):
    records = _records(sample_output)
    index = next(i for i, r in enumerate(records) if r["template"] == "program")
    session = browser.open_page(site.as_uri() + f"#i={index}")
    _ready(browser, session, f"document.getElementById('detail').dataset.index === '{index}' && "
                             "document.querySelector('.q .program')")
    shown = browser.evaluate(session, """[...document.querySelectorAll('.q:not(.original) .program')].map(p => ({
        steps: [...p.querySelectorAll('li')].map(li => li.textContent),
        changed: [...p.querySelectorAll('li.changed')].map(li => li.textContent),
        open: p.open }))""")
    record = records[index]
    assert len(shown) == len(record["perturbations"])
    for block, p in zip(shown, record["perturbations"], strict=True):
        assert len(block["steps"]) == len(p["semantic"])
        assert block["changed"] and block["open"]
        step = int(p["change"]["slot"].removeprefix("step")) if p["change"]["kind"] != "attribute" or \
            p["change"]["slot"].startswith("step") else None
        if step is not None and len(p["semantic"]) == len(record["semantic"]):
            assert any(line.startswith(f"{step}. ") for line in block["changed"])
    assert browser.errors() == []
