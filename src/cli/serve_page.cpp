#include "cli/serve_page.hpp"

#include "render/html_report_page.hpp"
#include "render/svg_document.hpp"

namespace attnviz {
namespace {

const char* const kBody = R"page(<style>
body { font-family: "DejaVu Sans", sans-serif; margin: 0; color: #222; }
form { padding: 10px 16px; border-bottom: 1px solid #ddd; display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: end; }
textarea { width: min(60em, 95vw); height: 4.5em; font: inherit; }
label { font-size: 13px; color: #555; display: flex; flex-direction: column; gap: 2px; }
input, select { font: inherit; width: 7em; }
button { font: inherit; padding: 4px 18px; }
#status { font-size: 13px; color: #555; padding: 4px 16px; margin: 0; min-height: 1.2em; }
#status.error { color: #b00020; }
iframe { border: 0; width: 100%; height: calc(100vh - 150px); }
</style>
</head>
<body>
<form id="run">
<label>text <textarea id="text" required placeholder="Once upon a time"></textarea></label>
<label>layers <input id="layers" value="all"></label>
<label>measure <select id="measure"><option>weights</option><option>norms</option><option>alti</option></select></label>
<label>generate <input id="generate" type="number" min="0" max="4096" value="0"></label>
<button id="go" type="submit">Run</button>
</form>
<p id="status" role="status"></p>
<iframe id="report" title="the run's attention report"></iframe>
<script>
(() => {
  "use strict";
  const $ = (id) => document.getElementById(id);
  function say(text, error) { $("status").textContent = text; $("status").className = error ? "error" : ""; }
  function show(id) { $("report").src = "/run/" + encodeURIComponent(id); }
  $("run").addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { text: $("text").value, layers: $("layers").value, measure: $("measure").value,
                   generate: Number($("generate").value) };
    say("running…");
    $("go").disabled = true;
    const started = performance.now();
    try {
      const answer = await fetch("/api/run?report=1", { method: "POST", headers: { "Content-Type": "application/json" },
                                               body: JSON.stringify(body) });
      if (!answer.ok) {
        const fault = await answer.json().catch(() => ({ error: answer.statusText }));
        say(answer.status + ": " + fault.error, true);
        return;
      }
      const id = answer.headers.get("X-Attnviz-Run"), tokens = answer.headers.get("X-Attnviz-Tokens");
      await answer.body.cancel();  // the dump is for programs; the page shows the report
      history.pushState(null, "", "#run=" + id);
      show(id);
      say("run " + id + ": " + tokens + " tokens in " + Math.round(performance.now() - started) + " ms");
    } catch (e) {
      say("the server did not answer: " + e, true);
    } finally {
      $("go").disabled = false;
    }
  });
  function follow() {
    const m = location.hash.match(/run=(\d+)/);
    if (m) show(m[1]);
  }
  window.addEventListener("popstate", follow);
  follow();
})();
</script>
</body>
</html>
)page";

}  // namespace

std::string serve_page(const std::string& model_name) {
  // The report's policy, and its own server for fetch and the frame.
  return page_head("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; "
                   "frame-src 'self'") +
         "<title>attnviz serve \u00B7 " + xml_text(model_name) + "</title>\n" + kBody;
}

}  // namespace attnviz
