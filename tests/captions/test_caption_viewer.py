"""`contrastgen view` on a caption set: every caption with its negatives and the facts that make
each false, the text escaped for HTML."""

from __future__ import annotations

import re

from caption_cli import run

from contrastgen.jsonio import read_jsonl, write_jsonl


def text_of(site) -> str:
    pages = sorted(site.glob("page-*.html"))
    return "".join(p.read_text() for p in pages)


def test_the_site_shows_every_caption_negative_and_falsifying_fact(tmp_path, gqa_captions):
    result = run("view", gqa_captions, "--static", tmp_path / "site", "--images", tmp_path)
    assert result.exit_code == 0, result.output
    html = text_of(tmp_path / "site")
    recs = list(read_jsonl(gqa_captions / "captions.jsonl"))
    for r in recs:
        assert f'id="{r["id"]}"' in html and r["caption"] in html
        for n in r["negatives"]:
            assert n["caption"] in html
    assert html.count('class="neg"') == sum(len(r["negatives"]) for r in recs)
    assert "is not to the right of" in html or "is not to the left of" in html  # a relation's proof in words
    assert re.search(r"objects \u201c[a-z ]+\u201d may denote: none", html)  # an absent noun's proof
    assert 'class="box"' in html  # the caption's region over the image
    added = next(n["change"] for r in recs for n in r["negatives"] if n["kind"] == "add_obj")
    assert f"\u201c{added['to']}\u201d added, where the caption adds \u201c{added['true']}\u201d" in html
    index = (tmp_path / "site" / "index.html").read_text()
    assert "replace_obj" in index and "aro_relation" in index


def test_record_text_is_escaped(tmp_path, gqa_captions):
    rec = next(iter(read_jsonl(gqa_captions / "captions.jsonl")))
    rec["caption"] = "<script>alert(1)</script>"
    rec["negatives"][0]["evidence"]["facts"].append({"fact": "may_be", "noun": "<img src=x onerror=alert(1)>",
                                                     "ids": []})
    write_jsonl(tmp_path / "captions.jsonl", [rec])
    result = run("view", tmp_path / "captions.jsonl", "--static", tmp_path / "site")
    assert result.exit_code == 0, result.output
    html = text_of(tmp_path / "site")
    assert "<script>" not in html and "<img src=x" not in html
    assert "&lt;script&gt;" in html
