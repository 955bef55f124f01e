"""The preview page in a real headless Chromium (Debian's), kept off the network.

Skips with a reason where no chromium is installed; `.ci/run` installs Debian's `chromium`
before `make test`, so CI always runs it.
"""

from __future__ import annotations

import json

import pytest
from cdp_pipe import PipeBrowser, find_chromium
from contrastgen.mturk import export_hits, render_preview
from mturk_helpers import make_records
from PIL import Image

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")

ITEMS = 4


@pytest.fixture()
def preview(tmp_path):
    records = make_records({"on_which_side_is_the_x": 8, "what_color_is_the_x": 4})
    records[0]["question"] = 'Is the "<b>bold</b>" fence on the left?'
    images = tmp_path / "images"
    images.mkdir()
    for rec in records:
        Image.new("RGB", (64, 48), (200, 30, 30)).save(images / f"{rec['image_id']}.jpg", "JPEG")
    out = tmp_path / "hits"
    export_hits(records, images_base_url=images.as_uri(), sample=12, seed=5, assignments=3,
                items_per_hit=ITEMS, out_dir=out)
    page = render_preview(out, n_hits=2)
    return out, page


@pytest.fixture()
def browser(tmp_path):
    b = PipeBrowser(CHROMIUM, tmp_path / "chromium-profile")
    yield b
    b.close()


FRAME = "document.querySelectorAll('iframe')[0].contentDocument"


def test_preview_shows_images_and_questions_and_submits_expected_fields(preview, browser):
    out, page = preview
    rows = (out / "upload" / "batch_input.csv").read_text().splitlines()
    session = browser.open_page(page.as_uri())
    # wait until the first frame's elements are upgraded and its images have loaded
    state = browser.evaluate(session, f"""
        new Promise(resolve => {{
          const poll = () => {{
            const d = {FRAME};
            const imgs = d ? [...d.querySelectorAll('img')] : [];
            if (d && d.readyState === 'complete' && imgs.length && imgs.every(i => i.complete)
                && d.getElementById('cg-submit')) {{
              resolve({{
                frames: document.querySelectorAll('iframe').length,
                images: imgs.map(i => ({{src: i.getAttribute('src'), width: i.naturalWidth}})),
                questions: [...d.querySelectorAll('.cg-question')].map(q => q.textContent),
                boldTags: d.querySelectorAll('.cg-question b').length,
                answerBoxes: [...d.querySelectorAll('crowd-input')].map(e => e.getAttribute('name')),
                visibleInputs: d.querySelectorAll('crowd-input input[type=text]').length,
                checkboxes: d.querySelectorAll('crowd-checkbox input[type=checkbox]').length,
              }});
            }} else setTimeout(poll, 50);
          }};
          poll();
        }})""")
    assert state["frames"] == 2
    manifest = json.loads((out / "manifest.json").read_text())
    first_hit = manifest["hits"][0]["items"]
    expected_urls = [manifest["items"][t]["image_url"] for t in first_hit]
    assert [i["src"] for i in state["images"]] == expected_urls
    assert all(i["width"] == 64 for i in state["images"])  # the image tag really shows the image
    expected_q = [f"{n}. {manifest['items'][t]['question']}" for n, t in enumerate(first_hit, 1)]
    assert state["questions"] == expected_q
    assert state["boldTags"] == 0  # a question's markup is shown as text, never interpreted
    assert state["answerBoxes"] == [f"item{i}_answer" for i in range(1, ITEMS + 1)]
    assert state["visibleInputs"] == ITEMS and state["checkboxes"] == ITEMS
    assert len(rows) == 1 + 6  # 24 items at 4 per HIT

    # submitting with a blank answer is refused by the layout's own check
    browser.events.clear()
    pending = browser.send("Runtime.evaluate", {"expression": f"{FRAME}.getElementById('cg-submit').click()"},
                           session=session, wait=False)
    dialog = browser.wait_event("Page.javascriptDialogOpening")
    assert "question 1" in dialog["params"]["message"]
    browser.send("Page.handleJavaScriptDialog", {"accept": True}, session=session)
    browser.reply(pending)
    assert browser.evaluate(session, f"{FRAME}.getElementById('cg-submitted')") is None

    # answer every question (one with "cannot tell") and submit
    submitted = browser.evaluate(session, f"""(() => {{
        const d = {FRAME};
        const boxes = d.querySelectorAll('crowd-input input');
        boxes.forEach((b, i) => {{ b.value = i === 1 ? '' : 'Left'; }});
        d.querySelectorAll('crowd-checkbox input')[1].checked = true;
        d.getElementById('cg-submit').click();
        return JSON.parse(d.getElementById('cg-submitted').textContent);
    }})()""")
    answers = submitted["taskAnswers"][0]
    expected_fields = {"hit_token"} | {f"item{i}_{f}" for i in range(1, ITEMS + 1)
                                       for f in ("token", "answer", "cannot_tell")}
    assert set(answers) == expected_fields
    assert answers["hit_token"] == manifest["hits"][0]["hit_token"]
    assert [answers[f"item{i}_token"] for i in range(1, ITEMS + 1)] == first_hit
    assert answers["item1_answer"] == "Left" and answers["item2_cannot_tell"] == {"on": True}
    assert answers["item1_cannot_tell"] == {"on": False}
    cols = submitted["columns"]
    assert cols["Answer.item2_cannot_tell.on"] == "true" and cols["Answer.item3_answer"] == "Left"


def test_preview_page_is_self_contained(preview):
    _, page = preview
    html = page.read_text()
    # the real script is swapped for the local stand-in; no frame loads any script from elsewhere
    assert "https://assets.crowd.aws" not in html
    assert "script src" not in html.replace("&quot;", '"').replace("&lt;", "<")
