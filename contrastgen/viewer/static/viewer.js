// contrastgen's contrast-set viewer: plain JavaScript, no library, no network beyond its own files.
// Data arrives as cgData(kind, ...) calls from data/*.js (a page opened from disk may load scripts,
// not fetch files). The URL hash holds the filters and the position, so a link shows what you saw.
"use strict";

const CG = { manifest: null, rows: null, pages: {}, waiting: {}, list: [], pos: 0, state: {} };
const LIST_WINDOW = 60; // rows of the list drawn around the position
const ROW = { template: 0, type: 1, k: 2, change: 3, direction: 4, fails: 5, review: 6, words: 7, label: 8 };

function cgData(kind, ...args) {
  if (kind === "manifest") { CG.manifest = args[0]; start(); }
  else if (kind === "index") { CG.rows = args[0]; indexLoaded(); }
  else if (kind === "page") {
    const [n, page] = args;
    CG.pages[n] = page;
    (CG.waiting[n] || []).forEach(fn => fn(page));
    delete CG.waiting[n];
  }
}

function loadScript(src) {
  const s = document.createElement("script");
  s.src = src;
  document.body.appendChild(s);
}

function withPage(n, fn) {
  if (CG.pages[n]) { fn(CG.pages[n]); return; }
  if (!CG.waiting[n]) { CG.waiting[n] = []; loadScript(`data/page-${String(n).padStart(5, "0")}.js`); }
  CG.waiting[n].push(fn);
}

function withSet(i, fn) {
  const size = CG.manifest.page_size;
  withPage(Math.floor(i / size), page => fn(page.sets[i % size], page));
}

// -- state <-> URL -------------------------------------------------------------------------------
const KEYS = { t: "f-template", k: "f-k", c: "f-change", d: "f-direction", m: "f-model", q: "f-search" };

function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  const st = {};
  for (const key of [...Object.keys(KEYS), "r", "i"]) if (h.get(key) !== null) st[key] = h.get(key);
  return st;
}

function writeHash() {
  const h = new URLSearchParams();
  for (const [key, value] of Object.entries(CG.state)) if (value !== "" && value !== undefined) h.set(key, value);
  h.set("i", String(CG.pos));
  history.replaceState(null, "", "#" + h.toString());
}

function filtered() { return Object.keys(KEYS).some(k => CG.state[k]) || CG.state.r === "1"; }

// -- start ---------------------------------------------------------------------------------------
function option(select, value, text) {
  const o = document.createElement("option");
  o.value = value; o.textContent = text;
  select.appendChild(o);
}

function start() {
  const m = CG.manifest;
  document.getElementById("title").textContent = `${m.title}: ${m.sets.toLocaleString()} contrast sets`;
  const sel = id => document.getElementById(id);
  m.filters.template.forEach((t, i) => option(sel("f-template"), "t" + i, "template: " + t));
  m.filters.type.forEach((t, i) => { if (t) option(sel("f-template"), "y" + i, "type: " + t); });
  m.filters.k.forEach(k => option(sel("f-k"), String(k), String(k)));
  m.filters.change.forEach((c, i) => option(sel("f-change"), String(i), c));
  m.filters.direction.forEach((d, i) => option(sel("f-direction"), String(i), d));
  m.models.forEach((name, i) => option(sel("f-model"), String(i), name));
  if (!m.models.length) sel("f-model").disabled = true;
  if (!m.has_review) document.getElementById("l-review").hidden = true;
  CG.state = readHash();
  for (const [key, id] of Object.entries(KEYS)) if (CG.state[key] !== undefined) sel(id).value = CG.state[key];
  sel("f-review").checked = CG.state.r === "1";
  CG.pos = Math.max(0, parseInt(CG.state.i || "0", 10) || 0);
  delete CG.state.i;
  if (filtered()) {
    status("loading the index…");
    loadScript("data/index.js");
  } else {  // first paint needs only the first set's page; the index (large) comes after it
    CG.list = null;
    CG.afterPaint = () => setTimeout(() => loadScript("data/index.js"), 0);
    render();
  }
  for (const id of Object.values(KEYS)) {
    sel(id).addEventListener(id === "f-search" ? "input" : "change", onFilter);
  }
  sel("f-review").addEventListener("change", onFilter);
  document.addEventListener("keydown", onKey);
}

function indexLoaded() {
  applyFilters(false);
}

function onFilter() {
  const sel = id => document.getElementById(id);
  for (const [key, id] of Object.entries(KEYS)) CG.state[key] = sel(id).value.trim();
  CG.state.r = sel("f-review").checked ? "1" : "";
  if (CG.rows) applyFilters(true);
}

function applyFilters(reset) {
  const st = CG.state, rows = CG.rows;
  const tmpl = st.t || "";
  const want = {
    template: tmpl.startsWith("t") ? +tmpl.slice(1) : null,
    type: tmpl.startsWith("y") ? +tmpl.slice(1) : null,
    k: st.k ? +st.k : null,
    change: st.c ? 1 << +st.c : 0,
    direction: st.d ? 1 << +st.d : 0,
    fails: st.m ? 1 << +st.m : 0,
    review: st.r === "1",
    words: (st.q || "").toLowerCase(),
  };
  const out = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (want.template !== null && r[ROW.template] !== want.template) continue;
    if (want.type !== null && r[ROW.type] !== want.type) continue;
    if (want.k !== null && r[ROW.k] !== want.k) continue;
    if (want.change && !(r[ROW.change] & want.change)) continue;
    if (want.direction && !(r[ROW.direction] & want.direction)) continue;
    if (want.fails && !(r[ROW.fails] & want.fails)) continue;
    if (want.review && !r[ROW.review]) continue;
    if (want.words && !r[ROW.words].includes(want.words)) continue;
    out.push(i);
  }
  CG.list = out;
  if (reset) CG.pos = 0;
  CG.pos = Math.min(CG.pos, Math.max(0, out.length - 1));
  render();
}

// -- rendering -----------------------------------------------------------------------------------
function total() { return CG.list ? CG.list.length : CG.manifest.sets; }
function setAt(pos) { return CG.list ? CG.list[pos] : pos; }
function status(text) { document.getElementById("status").textContent = text; }

function render() {
  writeHash();
  const n = total();
  status(n ? `${(CG.pos + 1).toLocaleString()} of ${n.toLocaleString()}` +
    (CG.list && n !== CG.manifest.sets ? ` (filtered from ${CG.manifest.sets.toLocaleString()})` : "")
    : "no contrast set matches these filters");
  renderList();
  const detail = document.getElementById("detail");
  if (!n) { detail.replaceChildren(); return; }
  const wanted = CG.pos;
  const index = setAt(wanted);
  withSet(index, (set, page) => {
    if (CG.pos === wanted) renderSet(set, page, index);
    if (CG.afterPaint) { const then = CG.afterPaint; CG.afterPaint = null; then(); }
  });
}

function renderList() {
  const nav = document.getElementById("list");
  const n = total();
  const first = Math.max(0, Math.min(CG.pos - 10, n - LIST_WINDOW));
  const frag = document.createDocumentFragment();
  for (let p = first; p < Math.min(n, first + LIST_WINDOW); p++) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.pos = String(p);
    const i = setAt(p);
    b.textContent = CG.rows ? CG.rows[i][ROW.label] : `set ${i + 1}`;
    if (CG.rows) b.appendChild(el("span", "meta", " · " + CG.manifest.filters.template[CG.rows[i][ROW.template]]));
    if (p === CG.pos) b.setAttribute("aria-current", "true");
    b.addEventListener("click", () => go(p));
    frag.appendChild(b);
  }
  if (n > first + LIST_WINDOW) {
    const more = document.createElement("div");
    more.className = "more";
    more.textContent = `… ${(n - first - LIST_WINDOW).toLocaleString()} more (j / n to move on)`;
    frag.appendChild(more);
  }
  nav.replaceChildren(frag);
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

const SVG = "http://www.w3.org/2000/svg";
function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// Where labels go: above their box, moved down a line at a time past labels already placed, so
// no two overlap (labels are 14px bold; a character is about 8.5px wide).
const LABEL_H = 16, CHAR_W = 8.5;
function placeLabel(placed, x, y, text, maxW) {
  const w = text.length * CHAR_W + 4;
  const left = Math.max(0, Math.min(x + 3, (maxW || Infinity) - w));
  let top = Math.max(0, y - LABEL_H - 2);
  const hits = t => placed.some(r => left < r.x + r.w && r.x < left + w && t < r.y + r.h && r.y < t + LABEL_H);
  for (let n = 0; n < 200 && hits(top); n++) top += LABEL_H;
  placed.push({ x: left, y: top, w, h: LABEL_H });
  return { x: left, y: top + LABEL_H - 3 };
}

function boxes(svg, scene, set, all) {
  const objects = scene.objects, marked = set.marked || [], original = set.original_objects || [];
  const ids = all ? Object.keys(objects)
    : [...new Set([...original, ...marked])].filter(id => objects[id]);
  const placed = [];
  const width = scene.w || 640;
  // the original's objects first, so their labels take the places nearest their boxes
  ids.sort((a, b) => (original.includes(b) - original.includes(a)));
  for (const id of ids) {
    const [name, x, y, w, h] = objects[id];
    const isOriginal = original.includes(id), on = isOriginal || marked.includes(id);
    svg.appendChild(svgEl("rect", { x, y, width: w, height: h,
      class: isOriginal ? "box original" : on ? "box" : "box other", "data-object": id }));
    if (on) {
      const text = `${name} (${id})` + (isOriginal ? " · original" : "");
      const at = placeLabel(placed, x, y, text, width);
      const label = svgEl("text", { x: at.x, y: at.y, class: isOriginal ? "label original" : "label" });
      label.textContent = text;
      svg.appendChild(label);
    }
  }
}

function figure(set, scene) {
  const wrap = el("div", "figure");
  const base = CG.manifest.images;
  const drawing = () => {
    wrap.replaceChildren();
    if (!scene) { wrap.appendChild(el("p", "meta", "no image and no scene graph for " + set.image_id)); return; }
    const w = scene.w || 640, h = scene.h || 480;
    const svg = svgEl("svg", { viewBox: `0 0 ${w} ${h}`, class: "drawing", preserveAspectRatio: "xMidYMid meet" });
    svg.style.position = "static";
    svg.style.height = "auto";
    boxes(svg, scene, set, true);
    wrap.appendChild(svg);
    wrap.appendChild(el("p", "meta", "drawn from the scene graph's boxes (no image found)"));
  };
  if (!base || set.image === null) { drawing(); return wrap; }
  const img = el("img");
  img.alt = "image " + set.image_id;
  const root = base.replace(/\/$/, "");
  // the build looked in a local folder (set.image); at a URL, try .jpg, then .png
  const tries = set.image !== undefined ? [`${root}/${encodeURIComponent(set.image)}`]
    : ["jpg", "png"].map(ext => `${root}/${encodeURIComponent(set.image_id)}.${ext}`);
  let t = 0;
  img.addEventListener("error", () => { t += 1; if (t < tries.length) img.src = tries[t]; else drawing(); });
  img.addEventListener("load", () => {
    const w = (scene && scene.w) || img.naturalWidth, h = (scene && scene.h) || img.naturalHeight;
    const svg = svgEl("svg", { viewBox: `0 0 ${w} ${h}`, preserveAspectRatio: "none" });
    if (scene) boxes(svg, scene, set, false);
    wrap.appendChild(svg);
    wrap.dataset.loaded = "1";
  });
  img.src = tries[0];
  wrap.appendChild(img);
  return wrap;
}

function models(answers) {
  const line = el("div");
  for (const name of CG.manifest.models) {
    const a = answers[name];
    if (!a) continue;
    line.appendChild(el("span", "model " + (a[1] ? "right" : "wrong"), `${name}: ${a[0]}`));
  }
  return line;
}

function questionBlock(cls, text, span, answer, meta) {
  const box = el("div", "q " + cls);
  const q = el("div");
  if (span && span[1] > span[0]) {
    q.appendChild(document.createTextNode(text.slice(0, span[0])));
    q.appendChild(el("mark", "", text.slice(span[0], span[1])));
    q.appendChild(document.createTextNode(text.slice(span[1])));
  } else {
    q.textContent = text;
  }
  q.appendChild(document.createTextNode(" "));
  q.appendChild(el("span", "answer", "→ " + answer));
  box.appendChild(q);
  if (meta) box.appendChild(el("div", "meta", meta));
  return box;
}

// A program, one step a line; the steps an edit changed are marked.
function program(lines, changed) {
  const box = el("details", "program");
  box.open = changed.length > 0;
  box.appendChild(el("summary", "meta", changed.length ? `edited program (step ${changed.join(", ")})` : "program"));
  const list = el("ol", "steps");
  lines.forEach((line, i) => list.appendChild(el("li", changed.includes(i) ? "changed" : "", line)));
  box.appendChild(list);
  return box;
}

function renderSet(set, page, index) {
  const detail = document.getElementById("detail");
  const frag = document.createDocumentFragment();
  frag.appendChild(figure(set, page.scenes[set.image_id]));
  const orig = questionBlock("original", set.question, null, set.answer,
    `original ${set.id} · image ${set.image_id} · ${set.template}${set.type ? " · " + set.type : ""}` +
    (set.disagreed ? " · the crowd disagreed" : ""));
  orig.appendChild(models(set.models));
  if (set.program && set.program.length) orig.appendChild(program(set.program, []));
  frag.appendChild(orig);
  for (const p of set.perturbations) {
    const c = p.change || {};
    const block = questionBlock(p.kind, p.question, p.span, p.answer,
      `${p.id} · ${p.kind} · ${c.kind}: ${c.from} → ${c.to} · ${p.direction}`);
    const facts = el("ul", "facts");
    for (const f of p.facts) facts.appendChild(el("li", "", f));
    block.appendChild(facts);
    if (p.program && p.program.length) block.appendChild(program(p.program, p.program_changed || []));
    block.appendChild(models(p.models));
    frag.appendChild(block);
  }
  detail.replaceChildren(frag);
  detail.dataset.set = set.id;
  detail.dataset.index = String(index);  // an original may head one set per template: the set's place
}

// -- navigation ----------------------------------------------------------------------------------
function go(pos) {
  const n = total();
  if (!n) return;
  CG.pos = Math.max(0, Math.min(n - 1, pos));
  render();
}

function onKey(e) {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) {
    if (e.key === "Escape") e.target.blur();
    return;
  }
  const moves = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1, n: LIST_WINDOW, PageDown: LIST_WINDOW,
    p: -LIST_WINDOW, PageUp: -LIST_WINDOW };
  if (e.key in moves) { e.preventDefault(); go(CG.pos + moves[e.key]); }
  else if (e.key === "/") { e.preventDefault(); document.getElementById("f-search").focus(); }
}
