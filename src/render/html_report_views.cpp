#include "render/html_report_views.hpp"

namespace attnviz {

const char* const kReportViewsCss = R"page(#tabs, #search-box { display: inline; font-size: 14px; margin-left: 24px; }
#search-box input { font-size: 13px; }
#zoom { margin-left: 16px; }
#large { max-width: calc(100vw - 240px); max-height: 92vh; overflow: auto; }
#large.zoomed { cursor: grab; }
#tabs a { margin-right: 14px; color: #1f5fa8; text-decoration: none; }
#tabs a.current { font-weight: bold; color: #222; border-bottom: 2px solid #d62728; }
body[data-only] .pane { display: none; }
body[data-only="heads"] #heads-view, body[data-only="model"] #model-view, body[data-only="model"] #overview-box,
body[data-only="matrix"] #matrix-view, body[data-only="text"] #text-view { display: block; }
body[data-only]:not([data-only="matrix"]) #search-box { display: none; }
#head-toggles { font-size: 13px; margin: 4px 0 8px 0; }
#head-toggles label { margin-right: 10px; white-space: nowrap; }
#head-toggles .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 3px; }
#head-columns { display: flex; align-items: flex-start; }
.tokcol { font-size: 12px; }
.tok { user-select: none; height: 16px; line-height: 16px; white-space: pre; padding: 0 4px; cursor: pointer; }
#hq .tok { text-align: right; }
.tok.selected { background: #ffd8d8; outline: 1px solid #d62728; }
.tok.generated, #text .generated { color: #1f5fa8; }
#head-lines line { pointer-events: none; }
#head-lines-box { position: relative; }
#head-rest { position: absolute; left: 0; top: 0; pointer-events: none; }
#head-note, #head-rest-note, #search-note { color: #505050; font-size: 13px; }
#head-rest-note { margin-top: -6px; }
#text { line-height: 1.9; font-size: 15px; max-width: 60em; }
#text span { user-select: none; cursor: pointer; border-radius: 3px; }
#text span:hover, #text span.selected { background: #ffd8d8; }
#text .generated { border-bottom: 2px solid #1f5fa8; }
#text .role { display: inline-block; min-width: 8em; margin-right: 6px; color: #555; font-size: 12px; text-transform: uppercase; }
#text .turns-note { color: #555; }
#tables-view table { border-collapse: collapse; font-size: 13px; margin: 6px 0; }
#tables-view th, #tables-view td { padding: 2px 8px; text-align: right; border-bottom: 1px solid #ddd; }
#tables-view td:first-child, #tables-view th:first-child { text-align: left; }
.mark { position: absolute; background: #d62728; pointer-events: none; }
#overview-title { display: inline-block; margin-right: 16px; }
#overview tr:first-child th { text-align: center; }
body[data-only="heads"] #legend, body[data-only="text"] #legend { display: none; }
#files-main a, #files a { margin-right: 12px; color: #1f5fa8; font-size: 13px; }
#files { color: #505050; font-size: 13px; margin: 10px 0; }
#files ul { margin: 4px 0; columns: 3; }
)page";

const char* const kReportViewsBody = R"page(<nav id="tabs" aria-label="views"><a href="#heads" data-tab="heads">head view</a><a href="#model" data-tab="model">model view</a><a href="#matrix" data-tab="matrix">matrix view</a><a href="#text" data-tab="text">text</a><a href="#all" data-tab="all">all</a></nav>
<section id="heads-view" class="pane"><h2>head view: lines from each query token (left) to the keys it attends to (right), opacity = weight</h2>
<div id="head-toggles"></div><p id="head-note"></p><p id="head-rest-note"></p><div id="head-columns"><div class="tokcol" id="hq"></div><div id="head-lines-box"><canvas id="head-rest" width="240" height="0"></canvas><svg id="head-lines" width="240" height="0"></svg></div><div class="tokcol" id="hk"></div></div></section>
<section id="tables-view" hidden></section>
<section id="text-view" class="pane"><h2>text (click a token to select it in every view)</h2><p id="text"></p></section>
<span id="search-box"><label>find a token <input id="search" type="search" size="14"></label> <span id="search-note"></span><span id="zoom">zoom <button id="zoom-out">−</button> <span id="zoom-level">1×</span> <button id="zoom-in">+</button></span></span>
)page";

// Head colours: matplotlib's tab10, then evenly spaced hues.
const char* const kReportViewsScript = R"page((function () {
  "use strict";
  const core = window.attnvizCore, data = core.data, state = core.state, element = core.element;
  const $ = (id) => document.getElementById(id);
  const TAB10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  const ROW_PX = 16, LINES_PX = 240;
  const SVG = $("head-lines").namespaceURI;  // the SVG namespace, without a URL in the page
  const heads = { visible: new Set(), selected: new Set(), hover: null };

  function headColour(h) { return h < TAB10.length ? TAB10[h] : "hsl(" + Math.round((h * 137.5) % 360) + ",65%,45%)"; }
  function view() { return data.views[state.view]; }
  function generated(i) { return data.promptLength > 0 && i >= data.promptLength; }
  // What a token reads as in running text: SentencePiece's ▁ and byte-level BPE's Ġ are spaces.
  function readable(token) { return token.replace(/\u2581/g, " ").replace(/\u0120/g, " ").replace(/\u010a/g, "\n"); }

  // The moved-to place: "#heads&layer=1&head=3&token=5" (layer, head, token from 0, BOS counted).
  function parseHash() {
    const parts = location.hash.replace(/^#/, "").split("&");
    const params = {};
    for (const part of parts.slice(1)) { const [k, v] = part.split("="); params[k] = Number(v); }
    return { tab: parts[0], params: params };
  }

  let refitting = false;
  function showTab(tab) {
    const known = ["heads", "model", "matrix", "text"];
    const before = document.body.dataset.only;
    if (known.includes(tab)) document.body.dataset.only = tab; else delete document.body.dataset.only;
    // Labels are measured when shown: a map built while hidden is built again.
    if (before !== document.body.dataset.only && (tab === "matrix" || !known.includes(tab))) {
      refitting = true;
      core.showHead(state.head);
      refitting = false;
    }
    for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("current", a.dataset.tab === (known.includes(tab) ? tab : "all"));
  }

  function follow() {
    const { tab, params } = parseHash();
    const v = Number.isInteger(params.layer) && params.layer >= 0 && params.layer < data.views.length ? params.layer : state.view;
    const nHeads = data.views[v].panels.length;
    const h = Number.isInteger(params.head) && params.head >= 0 && params.head < nHeads ? params.head : null;
    if (v !== state.view) { state.head = h === null ? 0 : h; core.showView(v); }
    else if (h !== null && h !== state.head) core.showHead(h);
    heads.visible = new Set(h === null ? [...Array(nHeads).keys()] : [h]);
    heads.selected = new Set(Number.isInteger(params.token) && params.token >= 0 ? [params.token] : []);
    showTab(tab);
    drawHeadView();
    drawText();
    document.body.dataset.hash = location.hash;
  }

  function toggles() {
    const box = $("head-toggles");
    box.replaceChildren();
    view().panels.forEach((panel, h) => {
      const label = element("label");
      const input = element("input");
      input.type = "checkbox";
      input.checked = heads.visible.has(h);
      input.dataset.head = h;
      input.addEventListener("change", () => { if (input.checked) heads.visible.add(h); else heads.visible.delete(h); drawLines(); });
      const swatch = element("span", "swatch");
      swatch.style.background = headColour(h);
      label.append(input, swatch, document.createTextNode(panel.name));
      box.append(label);
    });
    for (const [text, all] of [["all", true], ["none", false]]) {
      const button = element("button", "", text);
      button.addEventListener("click", () => {
        heads.visible = new Set(all ? view().panels.map((_, h) => h) : []);
        for (const input of box.querySelectorAll("input")) input.checked = all;
        drawLines();
      });
      box.append(button);
    }
  }

  function tokenColumn(box, tokens, axis, first) {
    box.replaceChildren();
    tokens.forEach((token, i) => {
      const position = first + i;
      const row = element("div", "tok" + (generated(position) ? " generated" : ""), readable(token) === "" ? "\u2423" : token);
      row.dataset[axis] = i;
      row.title = "#" + position;
      row.addEventListener("mouseenter", () => { heads.hover = { axis: axis, index: i }; drawLines(); });
      row.addEventListener("mouseleave", () => { heads.hover = null; drawLines(); });
      if (axis === "query") row.addEventListener("click", (event) => select(i, event.shiftKey || event.ctrlKey || event.metaKey));
      box.append(row);
    });
  }

  // Click: this token alone; shift/ctrl-click: add or remove it (several tokens: their weights
  // are summed on the key column).
  function select(i, add) {
    if (add) { if (heads.selected.has(i)) heads.selected.delete(i); else heads.selected.add(i); }
    else heads.selected = heads.selected.size === 1 && heads.selected.has(i) ? new Set() : new Set([i]);
    drawLines();
    drawText();
  }

  function drawHeadView() {
    const v = view();
    core.decode(v);
    toggles();
    tokenColumn($("hq"), v.queryTokens, "query", v.firstQuery);
    tokenColumn($("hk"), v.keyTokens, "key", 0);
    drawLines();
  }

  // At rest (no token hovered or selected) every line of the shown heads, as BertViz draws them,
  // on a canvas: an SVG element per line is too slow past a few thousand (512 tokens: 131 072 lines
  // a head). Lines are stroked in batches of equal 8-bit opacity round(255·w)/255, the most a
  // canvas shows; a weight that rounds to 0 would be invisible and is not drawn. Past MAX_REST_LINES
  // only the strongest levels are drawn, and the note under the toggles says from which weight.
  const MAX_REST_LINES = 20000, OPACITY_STEPS = 255;
  function drawRestLines(v, height) {
    const canvas = $("head-rest"), shown = [...heads.visible].sort((a, b) => a - b);
    const key = state.view + ":" + shown.join(",");
    if (canvas.dataset.key === key) return;
    canvas.dataset.key = key;
    canvas.width = LINES_PX;
    canvas.height = height;
    const nk = v.keyTokens.length, counts = new Float64Array(OPACITY_STEPS + 1);
    // levels[h][c]: the opacity step of each cell, 0 for masked (NaN) and invisible weights.
    const levels = shown.map((h) => {
      const m = v.matrices[h], out = new Uint8Array(m.length);
      for (let c = 0; c < m.length; c++) {
        const k = m[c] > 0 ? Math.min(OPACITY_STEPS, Math.round(m[c] * OPACITY_STEPS)) : 0;
        out[c] = k;
        counts[k]++;
      }
      return out;
    });
    let floor = OPACITY_STEPS + 1, drawn = 0, visible = 0;
    for (let k = OPACITY_STEPS; k >= 1; k--) {
      visible += counts[k];
      if (drawn + counts[k] <= MAX_REST_LINES && floor === k + 1) { drawn += counts[k]; floor = k; }
    }
    const context = canvas.getContext("2d");
    context.lineWidth = 1;  // hairlines: at 1.5 px, 53 000 lines took chromium 6 s more to paint
    shown.forEach((h, s) => {
      const level = levels[s], paths = new Map();
      for (let c = 0; c < level.length; c++) {
        const k = level[c];
        if (k === 0 || k < floor) continue;
        if (!paths.has(k)) paths.set(k, new Path2D());
        const i = Math.floor(c / nk), j = c % nk;
        paths.get(k).moveTo(0, i * ROW_PX + ROW_PX / 2);
        paths.get(k).lineTo(LINES_PX, j * ROW_PX + ROW_PX / 2);
      }
      context.strokeStyle = headColour(h);
      for (const [k, path] of paths) { context.globalAlpha = k / OPACITY_STEPS; context.stroke(path); }
    });
    canvas.dataset.lines = String(drawn);
    canvas.dataset.floor = String(floor);
    const least = core.formatValue((floor - 0.5) / OPACITY_STEPS);
    $("head-rest-note").textContent = floor === 1
      ? "no token hovered or selected: every line of the heads shown (" + drawn + "); weights under " + least +
        " are not drawn (under one 8-bit step of opacity, invisible)"
      : "no token hovered or selected: the " + drawn + " strongest lines of the heads shown (weight \u2265 " + least +
        ") of " + visible + " visible ones; hover or click a token for all of its lines";
  }

  // Lines of the hovered token (a query: to every key it may attend; a key: from every query that
  // may attend to it), else of the selected queries, for each visible head; opacity = weight.
  function drawLines() {
    const v = view(), nq = v.queryTokens.length, nk = v.keyTokens.length;
    const svg = $("head-lines");
    const height = Math.max(nq, nk) * ROW_PX;
    svg.setAttribute("height", String(height));
    svg.replaceChildren();
    const resting = heads.hover === null && heads.selected.size === 0;
    $("head-rest").style.display = resting ? "block" : "none";  // canvas { display: block } outranks [hidden]
    $("head-rest-note").style.visibility = resting ? "visible" : "hidden";  // keeps its line: no row moves under the mouse
    if (resting) drawRestLines(v, height);
    let pairs = [];
    if (heads.hover && heads.hover.axis === "key") {
      for (let i = 0; i < nq; i++) pairs.push([i, heads.hover.index]);
    } else {
      const queries = heads.hover ? [heads.hover.index] : [...heads.selected].filter((i) => i < nq);
      for (const i of queries) for (let j = 0; j < nk; j++) pairs.push([i, j]);
    }
    const sums = new Float64Array(nk);
    for (const h of [...heads.visible].sort((a, b) => a - b)) {
      const m = v.matrices[h];
      for (const [i, j] of pairs) {
        const w = m[i * nk + j];
        if (Number.isNaN(w)) continue;
        const line = document.createElementNS(SVG, "line");
        line.setAttribute("x1", "0"); line.setAttribute("y1", String(i * ROW_PX + ROW_PX / 2));
        line.setAttribute("x2", String(LINES_PX)); line.setAttribute("y2", String(j * ROW_PX + ROW_PX / 2));
        line.setAttribute("stroke", headColour(h));
        line.setAttribute("stroke-width", "2");
        line.setAttribute("stroke-opacity", String(Math.min(1, Math.max(0, w))));
        line.dataset.head = h; line.dataset.query = i; line.dataset.key = j; line.dataset.weight = String(w);
        svg.append(line);
        sums[j] += w;
      }
    }
    for (const row of $("hq").children) row.classList.toggle("selected", heads.selected.has(Number(row.dataset.query)));
    const shown = Math.max(1, heads.visible.size);
    for (const row of $("hk").children) {
      const j = Number(row.dataset.key), s = sums[j] / shown;
      row.style.background = s > 0 ? "rgba(214,39,40," + Math.min(1, s).toFixed(3) + ")" : "";
      row.title = "#" + j + (s > 0 ? " \u00b7 summed weight " + core.formatValue(sums[j]) : "");
    }
    $("head-note").textContent = heads.selected.size + heads.visible.size === 0 ? "" :
      "heads shown: " + heads.visible.size + " of " + v.panels.length + "; selected queries: " +
      ([...heads.selected].sort((a, b) => a - b).map((i) => "#" + (v.firstQuery + i)).join(", ") || "none (hover or click a token)");
  }

  function drawText() {
    const box = $("text");
    box.replaceChildren();
    const v = view();
    // A conversation's turns (--chat, --messages): each starts a line with its role; the
    // template's generation prompt after the last one gets a line of its own.
    const turnAt = new Map(data.turns.map((t) => [t.first, t.role]));
    const lastEnd = data.turns.length > 0 ? data.turns[data.turns.length - 1].end : -1;
    if (lastEnd >= 0 && (data.promptLength === 0 || lastEnd < data.promptLength)) turnAt.set(lastEnd, "");
    if (data.turnsNote) box.append(element("small", "turns-note", data.turnsNote), element("br"));
    v.queryTokens.forEach((token, i) => {
      const position = v.firstQuery + i;
      if (turnAt.has(position)) {
        if (box.querySelector("span")) box.append(element("br"));
        const role = turnAt.get(position);
        box.append(role === "" ? element("i", "role", "generation prompt") : element("b", "role", role));
      }
      const span = element("span", generated(position) ? "generated" : "", readable(token));
      span.dataset.token = i;
      span.title = "#" + position + " " + token;
      span.classList.toggle("selected", heads.selected.has(i));
      span.addEventListener("click", () => { select(i, false); core.highlight("q", i); });
      box.append(span);
    });
  }

  // The prompt's end and the sink column on the large map (as grid_marks.cpp draws them).
  function marks() {
    const v = view(), map = state.maps[state.maps.length - 1];
    if (!map) return;
    const add = (left, top, width, height) => {
      const mark = element("div", "mark");
      Object.assign(mark.style, { left: left + "px", top: top + "px", width: width + "px", height: height + "px" });
      map.box.append(mark);
    };
    const at = (index) => Math.round(index * map.cellPx / map.block);
    if (v.promptRows > 0 && v.promptRows < v.queryTokens.length) add(0, at(v.promptRows), map.canvas.width, 1);
    if (v.promptCols > 0 && v.promptCols < v.keyTokens.length) add(at(v.promptCols), 0, 1, map.canvas.height);
    if (v.excludeSink) add(0, -5, Math.max(2, map.cellPx), 3);
  }

  // Finds tokens containing the text (any case); Enter moves to the next one.
  let found = [], at = 0;
  function search(next) {
    const v = view(), text = $("search").value.toLowerCase();
    if (!next) { found = text === "" ? [] : v.queryTokens.map((t, i) => [t, i]).filter(([t]) => t.toLowerCase().includes(text)).map(([, i]) => i); at = 0; }
    else if (found.length > 0) at = (at + 1) % found.length;
    if (found.length === 0) { $("search-note").textContent = text === "" ? "" : "not found"; core.unhighlight(); return; }
    const i = found[at];
    core.highlight("q", i);
    $("search-note").textContent = (at + 1) + " of " + found.length + ": #" + (v.firstQuery + i) + " " + v.queryTokens[i];
    const label = document.querySelector('#large .label[data-query="' + i + '"]');
    if (label) label.scrollIntoView({ block: "center" });
  }

  // The model view's last column: each layer's mean over its heads, as overview.png draws it.
  function meanColumn() {
    const rows = document.querySelectorAll("#overview tr");
    if (rows.length === 0) return;
    // The overview shows the views of one measure (weights, norms, ALTI, rollout): so do its
    // header and mean column; views of one panel each (the rollout's) have no mean to add.
    const shown = data.views.filter((v) => core.measureOf(v) === state.measure);
    const header = element("tr");
    header.append(element("th"));
    shown[0].panels.forEach((panel) => header.append(element("th", "", panel.name.replace(/^.*?(H\d+)$/, "$1"))));
    rows[0].before(header);
    if (shown.every((v) => v.panels.length === 1)) return;
    header.append(element("th", "", "mean"));
    shown.forEach((v, l) => {
      core.decode(v);
      const n = v.matrices[0].length, mean = new Float32Array(n);
      for (const m of v.matrices) for (let c = 0; c < n; c++) mean[c] += m[c] / v.matrices.length;
      const g = core.geometry(v, core.OVERVIEW_PX);
      const canvas = element("canvas");
      core.drawCells(canvas, { queryTokens: v.queryTokens, keyTokens: v.keyTokens, matrices: [mean], panels: [v.panels[0]],
                               cmap: v.cmap, symmetric: v.symmetric }, 0, g.cellPx, g.block);
      canvas.title = v.name + " mean of heads";
      canvas.className = "mean";
      const cell = element("td");
      cell.append(canvas);
      rows[l].append(cell);
    });
  }

  // Tables the run computed (compare's statistics), as text: what the PNG draws as an image.
  function tables() {
    const box = $("tables-view");
    for (const t of data.tables || []) {
      box.hidden = false;
      const table = element("table");
      if (t.title) table.append(element("caption", "", t.title));
      const head = element("tr");
      for (const h of t.header) head.append(element("th", "", h));
      table.append(head);
      for (const r of t.rows) {
        const row = element("tr");
        for (const c of r) row.append(element("td", "", c));
        table.append(row);
      }
      box.append(table);
      if (t.note) box.append(element("p", "", t.note));
    }
  }

  // The run's other files as relative links (nothing is loaded until one is followed): the
  // whole-model pictures (overview.png, rollout.png) beside the model view's title, every layer's
  // pictures in a folded list at the end of the page.
  function links() {
    const all = data.links || [];
    const main = element("span"), list = element("ul");
    main.id = "files-main";
    for (const link of all) {
      const a = element("a", "", link.text);
      a.setAttribute("href", link.href.split("/").map(encodeURIComponent).join("/"));
      if (link.main) { main.append(a); continue; }
      const item = element("li");
      item.append(a);
      list.append(item);
    }
    const box = element("details");
    box.id = "files";
    box.append(element("summary", "", "every picture file of this run (" + list.children.length + ")"), list);
    if (main.children.length > 0 && !$("overview-box").hidden) $("overview-title").after(main);
    else if (main.children.length > 0) box.prepend(main);
    if (list.children.length > 0 || main.parentNode === box) $("tables-view").after(box);
  }

  // The legend's lines for the marks, as grid_marks.cpp words them.
  function legend() {
    const v = view(), lines = [];
    const prompt = Math.max(v.promptRows, v.promptCols);
    if (prompt > 0) lines.push("red line" + (v.promptRows > 0 && v.promptCols > 0 ? "s" : "") + ": the prompt ends after token " + (prompt - 1) +
      "; " + (v.promptRows > 0 ? "rows below" : "") + (v.promptRows > 0 && v.promptCols > 0 ? " and " : "") +
      (v.promptCols > 0 ? "columns right of it" : "") + " are generated tokens");
    if (v.excludeSink) lines.push("red bar over key 0: the sink column; it and queries 0\u20133 are left out of the colour range, so key 0 is drawn clipped at its top (--exclude-sink)");
    for (const old of document.querySelectorAll("#legend .marks")) old.remove();
    for (const line of lines) $("legend").append(element("div", "marks", line));
  }

  // Zoom: the large map drawn at 1, 2, 4 … 16 times its size (finer blocks for long texts, bigger
  // cells for short ones) in a scrolling box; dragging the map pans it.
  const MAX_ZOOM = 16;
  function zoom(factor) {
    const next = Math.min(MAX_ZOOM, Math.max(1, state.zoom * factor));
    if (next === state.zoom) return;
    state.zoom = next;
    $("zoom-level").textContent = next + "\u00d7";
    $("large").classList.toggle("zoomed", next > 1);
    refitting = true;
    core.showHead(state.head);
    refitting = false;
  }
  function panning() {
    const box = $("large");
    let from = null;
    box.addEventListener("mousedown", (event) => {
      if (state.zoom === 1 || event.button !== 0) return;
      from = { x: event.clientX, y: event.clientY, left: box.scrollLeft, top: box.scrollTop };
      event.preventDefault();
    });
    window.addEventListener("mousemove", (event) => {
      if (from === null) return;
      box.scrollLeft = from.left - (event.clientX - from.x);
      box.scrollTop = from.top - (event.clientY - from.y);
    });
    window.addEventListener("mouseup", () => { from = null; });
  }

  function setup() {
    tables();
    links();
    $("zoom-in").addEventListener("click", () => zoom(2));
    $("zoom-out").addEventListener("click", () => zoom(0.5));
    panning();
    heads.visible = new Set(view().panels.map((_, h) => h));
    document.querySelector("#thumbs").closest("section").id = "model-view";
    document.querySelector("#large").closest("section").id = "matrix-view";
    for (const id of ["overview-box", "model-view", "matrix-view"]) $(id).classList.add("pane");
    $("search").addEventListener("input", () => search(false));
    $("search").addEventListener("keydown", (event) => { if (event.key === "Enter") search(true); });
    // A click in the model view (overview or thumbnails) opens that head alone in the head view.
    core.hooks.push(() => {
      if (!refitting) heads.visible = new Set([state.head]);
      drawHeadView();
      drawText();
      marks();
      legend();
    });
    $("controls").append($("tabs"), $("search-box"));  // one line: no view moves down
    meanColumn();
    core.overviewHooks.push(meanColumn);  // the overview is rebuilt when the measure changes
    window.addEventListener("hashchange", follow);
    follow();
    marks();
    legend();
    window.attnvizViews = {
      visible: () => [...heads.visible].sort((a, b) => a - b),
      selected: () => [...heads.selected].sort((a, b) => a - b),
      lines: () => document.querySelectorAll("#head-lines line").length,
    };
    document.body.dataset.views = "ready";
    document.body.dataset.viewsReady = String(performance.now());  // every view drawn (scripts/bench/report_page.py)
  }

  setup();
})();
)page";

}  // namespace attnviz
