// `attnviz serve` (issue 36): the model loaded once, served over HTTP on the loopback interface
// by default (Debian's cpp-httplib): / is a page to type a text into, /api/run answers a run as
// the model dump, /api/tokenize as `tokenize --json`, /api/health says the server is up, /run/ID
// shows a recent run's report.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/options.hpp"

namespace attnviz {

/// Serves options.model on options.host:options.port (port 0: any free port) until SIGINT or
/// SIGTERM, which finish the runs in flight; prints "attnviz serve: http://HOST:PORT/ …" to `out`
/// once listening and one line per request to `err`. Runs one at a time (options.threads each);
/// at most options.queue more wait, later ones get 503 with Retry-After. A run over
/// options.max_tokens tokens (its text's plus those to generate) gets 413 naming the limit; bad
/// requests 400 with the command line's words; a run over the memory budget 413. Throws
/// UsageError (a model the server cannot run, an address it cannot bind), InputError as the
/// model's readers.
void run_serve(const Options& options, std::ostream& out, std::ostream& err, std::vector<std::string>& warnings);

}  // namespace attnviz
