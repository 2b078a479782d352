// The fixed parts of the HTML report (html_report.hpp assembles them around the data): the
// document head with a Content-Security-Policy that forbids every request, the CSS, the body's
// skeleton and the vanilla JavaScript that reads the JSON data block and draws the page with
// <canvas> and textContent only. No build step, no library, no web font.
#pragma once

namespace attnviz {

/// From <!DOCTYPE html> to just before <title> (charset and CSP meta elements).
extern const char* const kReportHead;
/// The stylesheet's text (inside <style>).
extern const char* const kReportCss;
/// The body's static elements, up to the data block.
extern const char* const kReportBody;
/// The script's text (inside <script>): reads #attnviz-data with JSON.parse.
extern const char* const kReportScript;

}  // namespace attnviz
