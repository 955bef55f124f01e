"""The viewer on CLEVR output, in a real headless Chromium, over Super-CLEVR's own renders.

Skips with a reason where no chromium is installed; `.ci/run` installs Debian's `chromium`.
"""

from __future__ import annotations

import io

import pytest
from cdp_pipe import PipeBrowser, find_chromium
from PIL import Image

from contrastgen.cli.view_cmds import build_site

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
MAGENTA = (255, 0, 255)


def _wait(browser, session, check: str):
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


def test_a_clevr_set_shows_its_render_boxes_and_part_facts(generated, sample, tmp_path):
    site, _ = build_site(generated, tmp_path / "site", scene_graphs=sample / "scenes", predictions=(),
                         review=None, images=str(sample / "images"), served=False)
    browser = PipeBrowser(CHROMIUM, tmp_path / "profile")
    try:
        session = browser.open_page(site.as_uri())
        browser.set_window(session, 1280, 900)
        _wait(browser, session, "document.querySelector('.figure[data-loaded] svg rect.box')")
        shown = browser.evaluate(session, """({
            natural: (() => { const i = document.querySelector('.figure img');
                              return i ? [i.naturalWidth, i.naturalHeight] : null; })(),
            facts: [...document.querySelectorAll('.facts li')].map(li => li.textContent),
            box: (() => { const r = document.querySelector('svg rect.box').getBoundingClientRect();
                          return [r.left, r.top, r.width, r.height]; })(),
        })""")
        assert shown["natural"] == [640, 480]  # the real Super-CLEVR render, not a drawing
        assert any("objects, and lists them all" in f for f in shown["facts"])
        png = browser.screenshot(session)
        image = Image.open(io.BytesIO(png)).convert("RGB")
        left, top, width, height = shown["box"]
        y = round(top + height / 2)
        near = [image.getpixel((round(left) + dx, y)) for dx in (-1, 0, 1)]
        assert any(sum(abs(a - b) for a, b in zip(px, MAGENTA, strict=True)) < 60 for px in near), near
        assert browser.errors() == []
    finally:
        browser.close()
