// core/error: limit messages that read right at the edge of the limit.
#include "core/error.hpp"

#include "support/test_support.hpp"

using namespace attnviz;

TEST_CASE("LimitError::memory: amounts in MiB, in bytes too when the MiB figures would be equal", "[core][errors]") {
  constexpr double kMiB = 1024.0 * 1024.0;
  const std::string clear = LimitError::memory("the job", 300 * kMiB, 200 * kMiB, "--max-memory MIB").what();
  CHECK(clear == "the job needs about 300 MiB, over the limit of 200 MiB (raise it with --max-memory MIB)");
  // The largest-input run of the benchmark: one token over a 12053.4 MiB budget.
  const std::string edge = LimitError::memory("the job", 12053.6 * kMiB, 12053.4 * kMiB, "--max-memory MIB").what();
  CHECK(edge == "the job needs about 12054 MiB, over the limit of 12053 MiB (raise it with --max-memory MIB)");
  const std::string same = LimitError::memory("the job", 12053.45 * kMiB, 12053.4 * kMiB, "--max-memory MIB").what();
  CHECK(same == "the job needs about 12053 MiB (12638958388 bytes), over the limit of 12053 MiB (12638905958 bytes) "
                "(raise it with --max-memory MIB)");
}

TEST_CASE("error: a NUL byte in a message is shown escaped, not as the end of the message "
          "(a name read from a damaged model file)", "[errors]") {
  const std::string name("bos\0_token_id", 13);
  const attnviz::InputError error = attnviz::InputError::inconsistent("m.gguf", "metadata " + name + ": bad type");
  CHECK(std::string(error.what()) == "m.gguf: metadata bos\\x00_token_id: bad type");
}
