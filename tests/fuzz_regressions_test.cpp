// Every input the fuzzer ever crashed on, replayed (tests/fuzz/regressions/), plus the seeds'
// worst cases: nothing but attnviz::Error may come out, under the sanitizer build too.
#include <filesystem>

#include "support/fuzz_body.hpp"
#include "support/test_support.hpp"

TEST_CASE("fuzz regressions: every saved input gives a result or an attnviz error", "[errors][fuzz]") {
  const std::filesystem::path folder = std::string(ATTNVIZ_TESTS_DIR) + "/fuzz/regressions";
  int replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
    INFO(entry.path().string());
    CHECK_NOTHROW(attnviz::test::exercise_input_file(entry.path().string()));
    ++replayed;
  }
  CHECK(replayed >= 1);
}

TEST_CASE("fuzz regressions: the bad-input catalogue gives only attnviz errors", "[errors][fuzz]") {
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ATTNVIZ_TESTS_DIR) + "/invalid")) {
    INFO(entry.path().string());
    CHECK_NOTHROW(attnviz::test::exercise_input_file(entry.path().string()));
  }
}
