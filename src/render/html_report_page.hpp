// The fixed parts of the HTML report (html_report.hpp assembles them around the data): the
// document head with a Content-Security-Policy that forbids every request, the CSS, the body's
// skeleton and the vanilla JavaScript that reads the JSON data block and draws the page with
// <canvas> and textContent only. No build step, no library, no web font.
#pragma once

#include <string>

namespace attnviz {

/// From <!DOCTYPE html> to just before <title>: the charset, the viewport and a
/// Content-Security-Policy meta element holding `content_security_policy`.
std::string page_head(const std::string& content_security_policy);
/// page_head of the static pages: nothing loaded, inline style and script, data: images.
std::string report_head();
/// The stylesheet's text (inside <style>).
extern const char* const kReportCss;
/// The body's static elements, up to the data block.
extern const char* const kReportBody;
/// The script's text (inside <script>): reads #attnviz-data with JSON.parse.
extern const char* const kReportScript;

}  // namespace attnviz
