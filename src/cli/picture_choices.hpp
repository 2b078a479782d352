// Which picture choices (--scale, --exclude-sink, --rows) fit which command, checked before any
// work (issue 23): a value that does not fit says which commands take it. Does not draw.
#pragma once

#include "cli/options.hpp"

namespace attnviz {

/// Throws UsageError naming the option, the value, and the commands or options it needs:
/// compare's --scale other than fixed or shared; --exclude-sink without --scale head, layer or
/// shared, or on compare; --rows generated on heatmaps without --generate N (N > 0).
void check_picture_choices(const Options& options);

/// --rows generated's first row: the prompt's length P when the record's last rows were
/// generated (0 < P < n_q). Throws UsageError naming --rows when the run has no generated rows
/// (render of a dump made without --generate). `what` names the run for the message.
int first_generated_row(int prompt_length, long n_q, const std::string& what);

}  // namespace attnviz
