// What the fuzzer does with one input, shared by the libFuzzer target (tests/fuzz/) and the
// regression test that replays every file in tests/fuzz/regressions/: load it as a sentence +
// weights file (self- and cross-attention), compute and dump it, read it as an attention JSON
// and draw it. attnviz::Error is the expected outcome of bad input; anything else escapes.
#pragma once

#include <string>

namespace attnviz::test {

/// Runs every loader and, for what loads, the maths and the renderer on the file at `path`.
/// Throws only what attnviz must never throw for any input (not attnviz::Error).
void exercise_input_file(const std::string& path);

}  // namespace attnviz::test
