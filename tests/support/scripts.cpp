#include "support/scripts.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

namespace attnviz::test {

std::string run_script(const std::string& name, const std::vector<std::string>& args) {
  const std::string script = std::string(ATTNVIZ_TESTS_DIR) + "/../scripts/" + name;
  // argv is built before fork: between fork and exec the child calls only async-signal-safe
  // functions (the test process may have OpenMP threads holding the allocator's lock).
  std::vector<char*> argv{const_cast<char*>("/usr/bin/python3"), const_cast<char*>(script.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int out[2];
  REQUIRE(pipe(out) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  close(out[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == kScriptMissingNumpy) FAIL(name + " needs python3-numpy (scripts/install_deps.sh --test)");
  INFO(name << " exited with " << WEXITSTATUS(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return text;
}

}  // namespace attnviz::test
