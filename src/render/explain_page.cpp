#include "render/explain_page.hpp"

#include "render/html_report_page.hpp"
#include "render/script_json.hpp"
#include "render/svg_document.hpp"

namespace attnviz {

namespace {

std::string numbers(const Eigen::Ref<const Vector>& v) {
  std::string out = "[";
  for (Eigen::Index i = 0; i < v.size(); ++i) out += (i ? "," : "") + script_json_number(v(i));
  return out + "]";
}

std::string rows(const Matrix& m) {
  std::string out = "[";
  for (Eigen::Index r = 0; r < m.rows(); ++r) out += (r ? "," : "") + numbers(m.row(r).transpose());
  return out + "]";
}

std::string view_json(const NeuronView& v) {
  std::string masked = "[";
  for (std::size_t j = 0; j < v.masked.size(); ++j) masked += (j ? "," : "") + std::string(v.masked[j] ? "1" : "0");
  return "{\"q\":" + numbers(v.q) + ",\"scores_raw\":" + numbers(v.scores_raw) + ",\"weights\":" + numbers(v.weights) +
         ",\"masked\":" + masked + "]}";
}

// The page's own style and script (the report's head and CSP are shared).
constexpr const char* kCss = R"page(body { font-family: "DejaVu Sans", Verdana, sans-serif; color: #222; margin: 16px; }
h1 { font-size: 18px; margin: 0 0 8px 0; }
#queries button { font: inherit; font-size: 13px; margin: 0 3px 3px 0; padding: 1px 5px; border: 1px solid #bbb; background: #f4f4f4; cursor: pointer; }
#queries button.on { background: #ca4040; color: #fff; border-color: #ca4040; }
#queries button:disabled { color: #aaa; cursor: default; }
#note { color: #505050; font-size: 13px; margin: 6px 0; }
table { border-collapse: collapse; font-size: 12px; }
td { padding: 0 6px 0 0; white-space: nowrap; }
td.label { text-align: right; }
.cells span { display: inline-block; width: 12px; height: 14px; }
.bar { display: inline-block; height: 12px; vertical-align: middle; }
.score { position: relative; display: inline-block; width: 100px; height: 14px; vertical-align: middle; }
.score .axis { position: absolute; left: 50px; top: 0; width: 1px; height: 14px; background: #8c8c8c; }
.score .bar { position: absolute; top: 1px; }
.masked { color: #888; }
th { text-align: left; font-weight: normal; color: #505050; padding-right: 10px; }
)page";

constexpr const char* kScript = R"page((function () {
  const data = JSON.parse(document.getElementById("attnviz-data").textContent);
  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // matplotlib's RdBu_r between its ends: blue (-) - white (0) - red (+).
  function colour(value, limit) {
    const t = limit > 0 ? Math.max(-1, Math.min(1, value / limit)) : 0;
    const blue = [33, 102, 172], red = [178, 24, 43];
    const end = t < 0 ? blue : red, a = Math.abs(t);
    const c = end.map(x => Math.round(255 + (x - 255) * a));
    return "rgb(" + c.join(",") + ")";
  }
  function absMax(rows) { let m = 0; for (const r of rows) for (const x of r) m = Math.max(m, Math.abs(x)); return m; }
  function cells(values, limit, grey) {
    const td = el("td", "cells");
    for (const x of values) { const s = el("span"); s.style.background = grey ? "#e1e1e1" : colour(x, limit); s.title = String(x); td.appendChild(s); }
    return td;
  }
  function fmt(x) { return Number(x).toPrecision(3); }
  const buttons = [];
  function show(i) {
    const view = data.views[i];
    buttons.forEach((b, n) => b.classList.toggle("on", n === i));
    const products = data.k.map(k => k.map((x, d) => view.q[d] * x));
    const weighted = data.v.map((v, j) => v.map(x => view.weights[j] * x));
    const output = data.v[0].map((_, d) => weighted.reduce((s, w) => s + w[d], 0));
    const qkLimit = Math.max(absMax([view.q]), absMax(data.k));
    const pLimit = absMax(products), vLimit = Math.max(absMax(weighted), absMax([output]));
    let sLimit = 0;
    view.scores_raw.forEach((s, j) => { if (!view.masked[j]) sLimit = Math.max(sLimit, Math.abs(s)); });
    const table = el("table");
    const head = el("tr");
    for (const h of ["", "k (key vectors)", "q \u2299 k (products)", "score = scale \u00B7 \u03A3 products", "", "weight (softmax)", "", "weight \u00B7 v"]) head.appendChild(el("th", "", h));
    table.appendChild(head);
    const qrow = el("tr");
    qrow.appendChild(el("td", "label", "q: " + data.query_tokens[i]));
    qrow.appendChild(cells(view.q, qkLimit, false));
    table.appendChild(qrow);
    data.key_tokens.forEach((token, j) => {
      const m = view.masked[j] === 1;
      const tr = el("tr", m ? "masked" : "");
      tr.appendChild(el("td", "label", token));
      tr.appendChild(cells(data.k[j], qkLimit, false));
      tr.appendChild(cells(products[j], pLimit, m));
      // Signed from the axis at 0, as explain.png draws them: the best score of a row of
      // negative scores has the shortest bar to the left, not none.
      const bar = el("td");
      if (!m) {
        const s = view.scores_raw[j], px = Math.round(50 * Math.abs(s) / (sLimit || 1));
        const axis = el("span", "score");
        axis.dataset.score = String(s);
        const b = el("span", "bar");
        b.style.width = px + "px";
        b.style.left = (s >= 0 ? 51 : 50 - px) + "px";
        b.style.background = s >= 0 ? "#ca4040" : "#3c6ebe";
        axis.appendChild(el("span", "axis"));
        axis.appendChild(b);
        bar.appendChild(axis);
      }
      tr.appendChild(bar);
      tr.appendChild(el("td", "", m ? "masked" : fmt(view.scores_raw[j])));
      const w = el("td");
      const wb = el("span", "bar");
      wb.style.width = Math.round(100 * view.weights[j]) + "px";
      wb.style.background = "#464646";
      w.appendChild(wb);
      tr.appendChild(w);
      tr.appendChild(el("td", "", m ? "" : fmt(view.weights[j])));
      tr.appendChild(cells(weighted[j], vLimit, m));
      table.appendChild(tr);
    });
    const out = el("tr");
    for (let n = 0; n < 6; ++n) out.appendChild(el("td"));
    out.appendChild(el("td", "label", "output = \u03A3 weight \u00B7 v"));
    out.appendChild(cells(output, vLimit, false));
    table.appendChild(out);
    const holder = document.getElementById("view");
    holder.replaceChildren(table);
    document.getElementById("note").textContent = "query " + i + " \u201C" + data.query_tokens[i] + "\u201D; colours: blue < 0 < red; q and k \u00B1" +
      fmt(qkLimit) + ", products \u00B1" + fmt(pLimit) + ", weight \u00B7 v and output \u00B1" + fmt(vLimit) + "; score bars \u00B1" + fmt(sLimit) + " from 0; scale " + fmt(data.scale) +
      ". Click a query token to explain it; greyed tokens have every key masked.";
  }
  const queries = document.getElementById("queries");
  data.query_tokens.forEach((token, i) => {
    const b = el("button", "", token);
    if (!data.views[i]) b.disabled = true;
    else b.addEventListener("click", () => show(i));
    buttons.push(b);
    queries.appendChild(b);
  });
  show(data.first_query);
})();
)page";

}  // namespace

std::string explain_page_html(const ExplainPage& page) {
  const NeuronView* any = nullptr;
  for (const auto& v : page.views) if (v) any = &*v;
  std::string views = "[";
  for (std::size_t i = 0; i < page.views.size(); ++i) views += (i ? "," : "") + (page.views[i] ? view_json(*page.views[i]) : "null");
  views += "]";
  const std::string data = "{\"query_tokens\":" + script_json_strings(page.query_tokens) +
                           ",\"key_tokens\":" + script_json_strings(page.key_tokens) +
                           ",\"k\":" + rows(any->k) + ",\"v\":" + rows(any->v) + ",\"scale\":" + script_json_number(any->scale) +
                           ",\"first_query\":" + std::to_string(page.first_query) + ",\"views\":" + views + "}";
  std::string html = report_head();
  html += "<title>" + xml_text(page.title) + "</title>\n<style>\n" + kCss + "</style>\n</head>\n<body>\n";
  html += "<h1 id=\"title\"></h1>\n<div id=\"queries\"></div>\n<div id=\"note\"></div>\n<div id=\"view\"></div>\n";
  html += "<script type=\"application/json\" id=\"attnviz-data\">" + data + "</script>\n";
  html += "<script type=\"application/json\" id=\"attnviz-title\">" + script_json_string(page.title) + "</script>\n";
  html += "<script>\ndocument.getElementById(\"title\").textContent = JSON.parse(document.getElementById(\"attnviz-title\").textContent);\n";
  html += std::string(kScript) + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace attnviz
