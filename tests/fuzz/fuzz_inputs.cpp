// libFuzzer target over attnviz's JSON loaders, its maths and its renderer (issue #6).
// Build with scripts/test.sh (clang, -DATTNVIZ_FUZZ=ON); run as
//   build-fuzz/tests/fuzz/fuzz_inputs CORPUS_DIR SEED_DIRS... -max_total_time=60
// Any crash it finds is saved by -artifact_prefix; copy it into tests/fuzz/regressions/,
// where fuzz_regressions_test replays it in every test run.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "support/fuzz_body.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The loaders take paths, as the command line does: one scratch file per process.
  static const std::string path = "/tmp/attnviz-fuzz-" + std::to_string(getpid()) + ".json";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  attnviz::test::exercise_input_file(path);
  std::remove(path.c_str());  // nothing left in /tmp when the run ends
  return 0;
}
