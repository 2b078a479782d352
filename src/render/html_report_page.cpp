#include "render/html_report_page.hpp"

namespace attnviz {

std::string page_head(const std::string& content_security_policy) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"" + content_security_policy + "\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
}

std::string report_head() {
  return page_head("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:");
}

const char* const kReportCss = R"page(body { font-family: "DejaVu Sans", Verdana, sans-serif; color: #222; background: #fff; margin: 16px; }
h1 { font-size: 18px; margin: 0 0 6px 0; }
h2 { font-size: 16px; margin: 14px 0 6px 0; }
h3 { font-size: 15px; margin: 10px 0 6px 0; }
#note, #legend, #keys { color: #505050; font-size: 13px; }
#controls { font-size: 14px; margin: 4px 0; }
#controls label { margin-right: 16px; }
canvas { image-rendering: pixelated; display: block; }
#overview { border-collapse: collapse; font-size: 12px; }
#overview td, #overview th { padding: 2px; }
#overview th { text-align: right; font-weight: normal; color: #505050; white-space: nowrap; }
#overview td canvas, .thumb canvas { outline: 1px solid #404040; cursor: pointer; }
#overview td.current canvas, .thumb.current canvas { outline: 3px solid #d62728; }
#thumbs { display: flex; flex-wrap: wrap; gap: 12px; }
.thumb { margin: 0; font-size: 12px; }
.thumb figcaption { margin-bottom: 3px; white-space: nowrap; }
.cellbox { position: relative; }
.hl { position: absolute; display: none; pointer-events: none; outline: 2px solid #ff00ff; }
#main { display: flex; align-items: flex-start; gap: 24px; }
.map { display: grid; grid-template-columns: auto auto auto; grid-template-rows: auto auto auto; }
.qaxis { grid-column: 1; grid-row: 1; writing-mode: vertical-rl; transform: rotate(180deg); text-align: center; color: #505050; font-size: 13px; margin-right: 4px; }
.qlabels { grid-column: 2; grid-row: 1; position: relative; margin-right: 6px; }
.map .cellbox { grid-column: 3; grid-row: 1; outline: 1px solid #404040; }
.klabels { grid-column: 3; grid-row: 2; position: relative; margin-top: 6px; }
.kaxis { grid-column: 3; grid-row: 3; text-align: center; color: #505050; font-size: 13px; margin-top: 4px; }
.label { position: absolute; white-space: pre; font-size: 12px; line-height: 14px; cursor: default; }
.qlabels .label { right: 0; }
.klabels .label { transform-origin: 0 0; transform: rotate(-90deg) translate(-100%, -50%); }
.klabels.upright .label { transform: translateX(-50%); }
.label:hover { color: #ff00ff; }
#colorbar { position: relative; display: flex; align-items: flex-start; gap: 4px; font-size: 12px; }
#colorbar canvas { outline: 1px solid #404040; }
.ticks { position: relative; width: 48px; }
.ticks span { position: absolute; left: 7px; white-space: nowrap; line-height: 14px; }
.ticks span::before { content: ""; position: absolute; left: -7px; top: 7px; width: 4px; border-top: 1px solid #404040; }
.caption { writing-mode: vertical-rl; transform: rotate(180deg); text-align: center; font-size: 13px; }
#tip { position: fixed; background: #fffff0; border: 1px solid #404040; padding: 4px 6px; font-size: 12px; pointer-events: none; white-space: pre; z-index: 10; }
#legend canvas { display: inline-block; vertical-align: middle; margin-right: 6px; }
)page";

const char* const kReportBody = R"page(<header>
<h1 id="title"></h1>
<p id="note"></p>
<div id="controls"><label id="view-label" hidden><span id="view-kind">view</span> <select id="view-select"></select></label><span id="keys"></span></div>
</header>
<section id="overview-box" hidden><h2 id="overview-title"></h2><table id="overview"></table></section>
<section><h2 id="figure-title"></h2><div id="thumbs"></div></section>
<section><h3 id="panel-title"></h3><div id="main"><div id="large"></div><div id="colorbar"></div></div></section>
<p id="legend"></p>
<div id="tip" role="tooltip" hidden><div class="tip-head"></div><div class="tip-query"></div><div class="tip-key"></div><div class="tip-value"></div></div>
)page";

// Colours follow the C++ renderer exactly: color_position() of color_scale.cpp, the table entry
// min(floor(t * 256), 255) of colormap.cpp, the masked fill and 1-px hatch of heatmap.hpp.
const char* const kReportScript = R"page("use strict";
(function () {
  const data = JSON.parse(document.getElementById("attnviz-data").textContent);
  const MASKED_FILL = [191, 191, 191], MASKED_HATCH = [235, 235, 235], ONE_RUN_HATCH = [110, 110, 110], HATCH_PERIOD = 6;
  // A masked pixel at (x, y) from the panel's origin: the grey hatch along x + y, or for a cell
  // outside a sliding window (or masked in one compared run only; allowed byte 2) the darker
  // hatch along x − y, as heatmap.cpp's draw_cells.
  function maskedColour(x, y, apart) {
    if (apart) return ((x - y) % HATCH_PERIOD + HATCH_PERIOD) % HATCH_PERIOD === 0 ? ONE_RUN_HATCH : MASKED_FILL;
    return (x + y) % HATCH_PERIOD === 0 ? MASKED_HATCH : MASKED_FILL;
  }
  const LARGE_PX = 640, THUMB_PX = 160, OVERVIEW_PX = 48, MAX_CELL_PX = 32, LABEL_PITCH_PX = 14;
  const MIN_COLORBAR_PX = 160, TABLE_ENTRIES = 256, MIN_LABEL_SPACING_PX = 4;
  const $ = (id) => document.getElementById(id);
  const state = { view: 0, head: 0, maps: [], measure: "weights", zoom: 1 };  // zoom: the large map's scale (html_report_views.cpp)
  const hooks = [];  // called after each showHead (html_report_views.cpp: head view, text panel)
  const overviewHooks = [];  // called after each rebuild of the overview (html_report_views.cpp: the mean column)

  function element(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function bytes(base64) {
    const text = atob(base64);
    const out = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out;
  }

  const tables = {};
  for (const [name, hex] of Object.entries(data.colormaps)) {
    const table = new Uint8Array(3 * TABLE_ENTRIES);
    for (let i = 0; i < table.length; i++) table[i] = parseInt(hex.substr(2 * i, 2), 16);
    tables[name] = table;
  }

  // color_position(): where a value falls in a range, clamped; the mid colour for a flat range.
  function position(range, value) {
    const lo = range[0], hi = range[1];
    if (!(hi > lo)) return 0.5;
    if (range[2]) return Math.min(1, Math.max(0, (Math.log10(Math.max(value, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))));
    return Math.min(1, Math.max(0, (value - lo) / (hi - lo)));
  }
  function entry(t) { return Number.isNaN(t) ? 0 : Math.min(Math.floor(t * TABLE_ENTRIES), TABLE_ENTRIES - 1); }

  // One Float32Array per panel, [query][key] row-major, NaN where masked; view.kinds keeps the
  // allowed bytes (2: the other hatch) or null.
  function decode(view) {
    if (view.matrices) return;
    const nq = view.queryTokens.length, nk = view.keyTokens.length, n = nq * nk;
    const allowed = view.allowed === null ? null : bytes(view.allowed);
    view.kinds = allowed;
    const raw = bytes(view.values);
    const step = view.encoding === "u16" ? (view.hi - view.lo) / 65535 : 0;
    // The values are little-endian: read in place on a little-endian machine (every browser's
    // platform today), through a DataView otherwise.
    const stored = new DataView(raw.buffer), little = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
    const f32 = view.encoding === "f32";
    const words = !little ? null : f32 ? new Float32Array(raw.buffer, 0, raw.length / 4) : new Uint16Array(raw.buffer, 0, raw.length / 2);
    const lo = f32 ? 0 : view.lo, scale = f32 ? 1 : step;
    let k = 0;
    // A panel with a mask of its own (compare's runs) reads its cells through it.
    view.panelKinds = view.panelAllowed ? view.panelAllowed.map(bytes) : null;
    view.matrices = view.panels.map((panel, p) => {
      const m = new Float32Array(n), own = view.panelKinds ? view.panelKinds[p] : allowed;
      for (let c = 0; c < n; c++) {
        if (own !== null && own[c] !== 1) { m[c] = NaN; continue; }
        const x = words !== null ? words[k] : f32 ? stored.getFloat32(4 * k, true) : stored.getUint16(2 * k, true);
        m[c] = f32 ? x : lo + x * scale;
        k++;
      }
      return m;
    });
  }

  // Draws a panel at cellPx pixels per drawn cell; each drawn cell is the max over block x block
  // cells (the value of largest magnitude for signed data), masked when none is allowed.
  function drawCells(canvas, view, p, cellPx, block) {
    const nq = view.queryTokens.length, nk = view.keyTokens.length;
    const rows = Math.ceil(nq / block), cols = Math.ceil(nk / block);
    const w = cols * cellPx, h = rows * cellPx;
    canvas.width = w;
    canvas.height = h;
    const context = canvas.getContext("2d");
    const image = context.createImageData(w, h);
    const px = image.data, m = view.matrices[p], table = tables[view.cmap], range = view.panels[p].range;
    const kinds = view.panelKinds ? view.panelKinds[p] : view.kinds;
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        let v = NaN, apart = false;
        for (let i = r * block; i < Math.min(nq, (r + 1) * block); i++) {
          for (let j = c * block; j < Math.min(nk, (c + 1) * block); j++) {
            const x = m[i * nk + j];
            if (Number.isNaN(x)) { apart = apart || (kinds !== null && kinds !== undefined && kinds[i * nk + j] === 2); continue; }
            if (Number.isNaN(v)) v = x;
            else v = view.symmetric ? (Math.abs(x) > Math.abs(v) ? x : v) : Math.max(v, x);
          }
        }
        const masked = Number.isNaN(v), e = masked ? 0 : 3 * entry(position(range, v));
        for (let y = r * cellPx; y < (r + 1) * cellPx; y++) {
          for (let x = c * cellPx; x < (c + 1) * cellPx; x++) {
            const o = 4 * (y * w + x);
            if (masked) {
              const colour = maskedColour(x, y, apart);
              px[o] = colour[0]; px[o + 1] = colour[1]; px[o + 2] = colour[2];
            } else {
              px[o] = table[e]; px[o + 1] = table[e + 1]; px[o + 2] = table[e + 2];
            }
            px[o + 3] = 255;
          }
        }
      }
    }
    context.putImageData(image, 0, 0);
  }

  // Cell size and block for a map of at most side px.
  function geometry(view, side, maxCellPx = MAX_CELL_PX) {
    const n = Math.max(view.queryTokens.length, view.keyTokens.length);
    if (n > side) return { cellPx: 1, block: Math.ceil(n / side) };
    return { cellPx: Math.max(1, Math.min(maxCellPx, Math.floor(side / n))), block: 1 };
  }

  function makeCells(view, p, side, maxCellPx) {
    const g = geometry(view, side, maxCellPx);
    const box = element("div", "cellbox");
    const canvas = element("canvas");
    drawCells(canvas, view, p, g.cellPx, g.block);
    const hl = element("div", "hl");
    box.append(canvas, hl);
    const map = { view: view, panel: p, cellPx: g.cellPx, block: g.block, canvas: canvas, hl: hl, box: box };
    canvas.addEventListener("mousemove", (event) => hover(map, event));
    canvas.addEventListener("mouseleave", hideTip);
    return map;
  }

  const tip = $("tip");
  function hideTip() { tip.hidden = true; }
  function quoted(text) { return "\u201c" + text + "\u201d"; }
  function formatValue(v) { return v.toPrecision(4); }

  function hover(map, event) {
    const view = map.view, nq = view.queryTokens.length, nk = view.keyTokens.length;
    const box = map.canvas.getBoundingClientRect();
    const x = (event.clientX - box.left) * map.canvas.width / box.width;
    const y = (event.clientY - box.top) * map.canvas.height / box.height;
    const i0 = Math.floor(y / map.cellPx) * map.block, j0 = Math.floor(x / map.cellPx) * map.block;
    if (i0 < 0 || j0 < 0 || i0 >= nq || j0 >= nk) { hideTip(); return; }
    const m = view.matrices[map.panel];
    tip.querySelector(".tip-head").textContent = view.panels[map.panel].title;
    if (map.block === 1) {
      const v = m[i0 * nk + j0];
      tip.querySelector(".tip-query").textContent = "query " + i0 + " " + quoted(view.queryTokens[i0]);
      tip.querySelector(".tip-key").textContent = "key " + j0 + " " + quoted(view.keyTokens[j0]);
      tip.querySelector(".tip-value").textContent = !Number.isNaN(v) ? view.colorbar.label + " " + formatValue(v)
        : (view.panelKinds ? view.panelKinds[map.panel] : view.kinds || [])[i0 * nk + j0] === 2
          ? "masked: " + view.oneRunLegend.replace(/^cross-hatched: /, "") : "masked";
    } else {
      const i1 = Math.min(nq, i0 + map.block) - 1, j1 = Math.min(nk, j0 + map.block) - 1;
      // The block's value as drawn: its max, or for signed data the value of largest magnitude.
      let best = NaN;
      for (let i = i0; i <= i1; i++) for (let j = j0; j <= j1; j++) {
        const v = m[i * nk + j];
        if (Number.isNaN(v)) continue;
        if (Number.isNaN(best) || (view.symmetric ? Math.abs(v) > Math.abs(best) : v > best)) best = v;
      }
      const rule = view.symmetric ? "largest-magnitude " : "max ";
      tip.querySelector(".tip-query").textContent = "queries " + i0 + "\u2013" + i1;
      tip.querySelector(".tip-key").textContent = "keys " + j0 + "\u2013" + j1;
      tip.querySelector(".tip-value").textContent = Number.isNaN(best) ? "masked" : rule + view.colorbar.label + " " + formatValue(best);
    }
    tip.hidden = false;
    tip.style.left = (event.clientX + 14) + "px";
    tip.style.top = (event.clientY + 14) + "px";
  }

  // Outlines query row i (axis "q") or key column j (axis "k") on every map shown.
  function highlight(axis, index) {
    for (const map of state.maps) {
      const at = Math.floor(index / map.block) * map.cellPx;
      const s = map.hl.style;
      s.display = "block";
      if (axis === "q") { s.left = "0px"; s.top = at + "px"; s.width = map.canvas.width + "px"; s.height = map.cellPx + "px"; }
      else { s.top = "0px"; s.left = at + "px"; s.height = map.canvas.height + "px"; s.width = map.cellPx + "px"; }
    }
  }
  function unhighlight() { for (const map of state.maps) map.hl.style.display = "none"; }

  function labelStride(map) { return Math.max(1, Math.ceil(LABEL_PITCH_PX / map.cellPx)) * map.block; }

  function largeMap(view, p) {
    const map = makeCells(view, p, LARGE_PX * state.zoom, MAX_CELL_PX * state.zoom);
    const root = element("div", "map");
    const qbox = element("div", "qlabels"), kbox = element("div", "klabels");
    root.append(element("div", "qaxis", view.queryAxis), qbox, map.box, kbox, element("div", "kaxis", view.keyAxis));
    const stride = labelStride(map);
    const half = map.cellPx / 2;
    for (let i = 0; i < view.queryLabels.length; i += stride) {
      const indexed = stride > 1 || view.firstQuery > 0;  // as drawn_query_label (head_grid.hpp)
      const label = element("span", "label", indexed ? "#" + (view.firstQuery + i) + " " + view.queryLabels[i] : view.queryLabels[i]);
      label.dataset.query = i;
      label.style.top = (Math.floor(i / map.block) * map.cellPx + half - 7) + "px";
      label.addEventListener("mouseenter", () => highlight("q", i));
      label.addEventListener("mouseleave", unhighlight);
      qbox.append(label);
    }
    for (let j = 0; j < view.keyLabels.length; j += stride) {
      const label = element("span", "label", stride > 1 ? "#" + j + " " + view.keyLabels[j] : view.keyLabels[j]);
      label.dataset.key = j;
      label.style.left = (Math.floor(j / map.block) * map.cellPx + half) + "px";
      label.addEventListener("mouseenter", () => highlight("k", j));
      label.addEventListener("mouseleave", unhighlight);
      kbox.append(label);
    }
    qbox.style.height = map.canvas.height + "px";
    // Label 0 sits 7 px above the middle of a row thinner than its line: room inside #large's scroll box.
    root.style.paddingTop = Math.max(0, 7 - half) + "px";
    kbox.style.width = map.canvas.width + "px";
    return { map: map, root: root, qbox: qbox, kbox: kbox };
  }

  // Labels are positioned absolutely: their boxes take the widest label's size once shown. Key
  // labels stay upright when every one fits its cell, as in the PNG (short tokens, characters).
  function fitLabels(large) {
    let widest = 0, tallest = 0;
    for (const label of large.qbox.children) widest = Math.max(widest, label.offsetWidth);
    for (const label of large.kbox.children) tallest = Math.max(tallest, label.offsetWidth);
    large.qbox.style.width = widest + "px";
    const upright = large.map.block === 1 && tallest + MIN_LABEL_SPACING_PX <= large.map.cellPx;
    large.kbox.classList.toggle("upright", upright);
    large.kbox.style.height = (upright ? LABEL_PITCH_PX : tallest) + "px";
  }

  function drawColorbar(view, height) {
    const box = $("colorbar");
    box.replaceChildren();
    const bar = view.colorbar, table = tables[view.cmap];
    const h = Math.max(MIN_COLORBAR_PX, height);
    const canvas = element("canvas");
    canvas.width = 18;
    canvas.height = h;
    const context = canvas.getContext("2d");
    const image = context.createImageData(18, h);
    for (let y = 0; y < h; y++) {
      const t = 1 - (y + 0.5) / h;
      const e = 3 * entry(bar.range[1] > bar.range[0] ? t : 0.5);  // position(value_at_position(t)) = t
      for (let x = 0; x < 18; x++) {
        const o = 4 * (y * 18 + x);
        image.data[o] = table[e]; image.data[o + 1] = table[e + 1]; image.data[o + 2] = table[e + 2]; image.data[o + 3] = 255;
      }
    }
    context.putImageData(image, 0, 0);
    const ticks = element("div", "ticks");
    ticks.style.height = h + "px";
    for (const [value, text] of bar.ticks) {
      const tick = element("span", "", text);
      tick.style.top = (Math.round((1 - position(bar.range, value)) * (h - 1)) - 7) + "px";
      ticks.append(tick);
    }
    box.append(canvas, ticks, element("div", "caption", bar.label), element("div", "caption", bar.caption));
  }

  // A line per kind of masked cell shown, with its swatch, as head_grid_layout.cpp's legend_lines.
  function drawLegend(view) {
    const legend = $("legend");
    legend.replaceChildren();
    if (view.allowed === null) return;
    const swatchLine = (apart, text) => {
      const line = element("div", apart ? "apart" : "masked");
      const swatch = element("canvas");
      const side = 12;
      swatch.width = swatch.height = side;
      const context = swatch.getContext("2d");
      for (let y = 0; y < side; y++) for (let x = 0; x < side; x++) {
        context.fillStyle = "rgb(" + maskedColour(x, y, apart).join(",") + ")";
        context.fillRect(x, y, 1, 1);
      }
      line.append(swatch, document.createTextNode(text));
      legend.append(line);
    };
    if (view.kinds.includes(0)) swatchLine(false, "grey hatched: masked (causal/padding), not attended");
    if (view.kinds.includes(2)) swatchLine(true, view.oneRunLegend);
  }

  function showView(v) {
    const view = data.views[v];
    decode(view);
    state.view = v;
    state.head = Math.min(state.head, view.panels.length - 1);
    $("view-select").value = String(v);
    $("figure-title").textContent = view.title;
    state.thumbs = [];
    const thumbs = $("thumbs");
    thumbs.replaceChildren();
    const maps = [];
    view.panels.forEach((panel, p) => {
      const figure = element("figure", "thumb");
      const map = makeCells(view, p, THUMB_PX);
      figure.append(element("figcaption", "", panel.title), map.box);
      map.canvas.addEventListener("click", () => showHead(p));
      figure.dataset.head = p;
      thumbs.append(figure);
      maps.push(map);
    });
    state.thumbMaps = maps;
    showHead(state.head);
    drawLegend(view);
    markOverview();
  }

  function showHead(p) {
    const view = data.views[state.view];
    state.head = p;
    const large = largeMap(view, p);
    $("large").replaceChildren(large.root);
    fitLabels(large);
    $("panel-title").textContent = view.panels[p].title;
    for (const figure of $("thumbs").children) figure.classList.toggle("current", Number(figure.dataset.head) === p);
    state.maps = state.thumbMaps.concat([large.map]);
    drawColorbar(view, large.map.canvas.height);
    document.body.dataset.view = state.view;
    document.body.dataset.head = p;
    markOverview();
    for (const hook of hooks) hook();
  }

  function markOverview() {
    for (const cell of document.querySelectorAll("#overview td")) {
      cell.classList.toggle("current", Number(cell.dataset.view) === state.view && Number(cell.dataset.head) === state.head);
    }
  }

  function buildOverview() {
    if (!data.layered) return;
    $("overview-box").hidden = false;
    $("overview-title").textContent = "layers \u00d7 heads (click to show)";
    const table = $("overview");
    table.replaceChildren();
    data.views.forEach((view, v) => {
      if (measureOf(view) !== state.measure) return;
      decode(view);
      const row = element("tr");
      row.append(element("th", "", view.name));
      view.panels.forEach((panel, p) => {
        const cell = element("td");
        cell.dataset.view = v;
        cell.dataset.head = p;
        const g = geometry(view, OVERVIEW_PX);
        const canvas = element("canvas");
        drawCells(canvas, view, p, g.cellPx, g.block);
        canvas.title = panel.name;
        canvas.addEventListener("click", () => { state.head = p; showView(v); });
        cell.append(canvas);
        row.append(cell);
      });
      table.append(row);
    });
    for (const hook of overviewHooks) hook();
  }

  // Views of several measures (issue 20: weights, value-weighted norms, ALTI): one measure is
  // shown at a time; the layer selector, the arrows and the overview keep to it.
  function measureOf(view) { return view.measure || "weights"; }

  function shownViews() {
    return data.views.map((view, v) => v).filter((v) => measureOf(data.views[v]) === state.measure);
  }

  function nextView(step) {
    const shown = shownViews();
    const at = shown.indexOf(state.view) + step;
    return at >= 0 && at < shown.length ? shown[at] : -1;
  }

  function fillViewSelect() {
    const select = $("view-select");
    select.replaceChildren();
    const shown = shownViews();
    $("view-label").hidden = shown.length < 2;
    $("view-kind").textContent = data.layered ? "layer" : "view";
    for (const v of shown) {
      const option = element("option", "", data.views[v].name);
      option.value = String(v);
      select.append(option);
    }
  }

  const MEASURE_NAMES = { weights: "attention weights", norms: "norms \u2016\u03b1\u00b7f(x)\u2016", alti: "ALTI", rollout: "attention rollout" };

  function addMeasureSwitch() {
    const measures = [...new Set(data.views.map(measureOf))];
    if (measures.length < 2) return;
    const select = element("select");
    select.id = "measure-select";
    for (const m of measures) {
      const option = element("option", "", MEASURE_NAMES[m] || m);
      option.value = m;
      select.append(option);
    }
    const label = element("label", "", "show ");
    label.append(select);
    $("controls").insertBefore(label, $("keys"));
    select.addEventListener("change", () => {
      const at = shownViews().indexOf(state.view);
      state.measure = select.value;
      fillViewSelect();
      buildOverview();
      const shown = shownViews();
      showView(shown[Math.min(Math.max(at, 0), shown.length - 1)]);
    });
  }

  function setup() {
    document.title = data.title;
    $("title").textContent = data.title;
    const compact = data.views.some((view) => view.encoding === "u16");
    $("note").textContent = compact
      ? "Values are stored as 16-bit steps over each view's range (step = (max \u2212 min) / 65535, so at most half a step off); tooltips show 4 significant digits of the stored value."
      : "Values are stored as exact float32 (as in the dump); tooltips show them rounded to 4 significant digits.";
    state.measure = measureOf(data.views[0]);
    fillViewSelect();
    $("view-select").addEventListener("change", () => showView(Number($("view-select").value)));
    addMeasureSwitch();
    $("keys").textContent = data.views.length > 1 ? "keys: \u2190 \u2192 heads, \u2191 \u2193 " + (data.layered ? "layers" : "views") : "keys: \u2190 \u2192 heads";
    buildOverview();
    showView(0);
    document.addEventListener("keydown", (event) => {
      if (event.target instanceof HTMLSelectElement) return;
      const heads = data.views[state.view].panels.length;
      if (event.key === "ArrowRight" && state.head + 1 < heads) showHead(state.head + 1);
      else if (event.key === "ArrowLeft" && state.head > 0) showHead(state.head - 1);
      else if (event.key === "ArrowDown" && nextView(1) >= 0) showView(nextView(1));
      else if (event.key === "ArrowUp" && nextView(-1) >= 0) showView(nextView(-1));
      else return;
      event.preventDefault();
    });
    window.attnviz = { state: () => ({ view: state.view, head: state.head }), show: (v, p) => { state.head = p; showView(v); } };
    document.body.dataset.ready = String(performance.now());
  }

  setup();
  window.attnvizCore = { data: data, state: state, hooks: hooks, overviewHooks: overviewHooks, measureOf: measureOf, decode: decode, showView: showView, showHead: showHead,
                         highlight: highlight, unhighlight: unhighlight, element: element, formatValue: formatValue,
                         drawCells: drawCells, geometry: geometry, OVERVIEW_PX: OVERVIEW_PX };
})();
)page";

}  // namespace attnviz
