// The HTML report's views beyond the heatmaps (issue 23): tabs and deep links (#heads, #model,
// #matrix, #text, "#heads&layer=1&head=3&token=5"), the BertViz-style head view (two token
// columns, a line per query→key weight, a colour per head), the running-text panel, the matrix
// view's token search and the prompt/sink marks. Plain JavaScript over html_report_page.hpp's
// window.attnvizCore; tokens set with textContent only.
#pragma once

namespace attnviz {

/// CSS for the views (appended inside <style>).
extern const char* const kReportViewsCss;
/// The views' static elements (after kReportBody).
extern const char* const kReportViewsBody;
/// Script text appended after kReportScript in the same <script> element.
extern const char* const kReportViewsScript;

}  // namespace attnviz
