"""Named checks for the Python end-to-end tests (chat_cli_test.py, serve_test.py): each failure is
printed with its detail and the run goes on; finish() prints "NAME: P passed, F failed" and exits
1 on any failure."""
import sys


class Checks:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def __call__(self, what, condition, detail=""):
        if condition:
            self.passed += 1
        else:
            self.failed += 1
            print("FAILED: %s %s" % (what, str(detail)[:600]))

    def finish(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        sys.exit(1 if self.failed else 0)
