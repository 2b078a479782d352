"""A conversation's turns in the HTML report's text view (issue 34), in headless chromium:
stories260K with a chat template added (scripts/gguf_add_chat_template.py), run on four turns
with `heatmaps --chat… --format html`. Checks:
  - each turn starts a line with its role, then exactly its tokens: as many as `attnviz tokenize`
    gives for the rendered text through that turn, less those through the turn before (an
    independent count of the same template's text, written out here);
  - the template's generation prompt after the last turn gets a line of its own;
  - a template that does not render the conversation as growing text (the system message last)
    marks no turn and says why; --max-tokens cutting the conversation says so too;
  - the page makes no request and throws nothing.
Usage: chat_turns_test.py ATTNVIZ"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from gguf_add_chat_template import copy_with_string  # noqa: E402
from page_helpers import MODEL, Page, browser_in, go, new_page, run, screenshot  # noqa: E402

TEMPLATE = ("{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
            "{% if add_generation_prompt %}[assistant]{% endif %}{{ eos_token }}")
# The system message after every other one: the first message alone renders as text the whole
# conversation does not begin with.
SYSTEM_LAST = ("{% for m in messages if m.role != 'system' %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
               "{% for m in messages if m.role == 'system' %}({{ m.content }}){% endfor %}")
TURNS = [("system", "Be kind."), ("user", "Once upon a time"), ("assistant", "there was a cat"), ("user", "Go on")]
CHAT_ARGS = [arg for role, text in TURNS for arg in (("--chat", text) if role == "user" else ("--chat-role", f"{role}={text}"))]


def with_template(folder, name, template):
    model = os.path.join(folder, name + ".gguf")
    copy_with_string(MODEL, model, template)
    return model


def token_count(attnviz, text):
    done = subprocess.run([attnviz, "tokenize", "--model", MODEL, "--text", text, "--json"], capture_output=True, text=True,
                          check=True)
    return len(json.loads(done.stdout)["token_ids"])


def text_view(page):
    """The text view's lines: [role label, number of token spans] in order, and its note."""
    go(page, "#text")
    return page.b.evaluate("""(() => {
      const lines = [];
      for (const e of document.getElementById('text').children) {
        if (e.classList.contains('role')) lines.push([e.textContent, 0]);
        else if (e.tagName === 'SPAN' && lines.length > 0) lines[lines.length - 1][1] += 1;
      }
      const note = document.querySelector('#text .turns-note');
      return { lines, spans: document.querySelectorAll('#text span').length, note: note ? note.textContent : '' };
    })()""")


def main():
    attnviz = sys.argv[1]
    checks = 0
    with browser_in("attnviz-chat-turns-") as (browser, out):
        model = with_template(out, "chat", TEMPLATE)
        run(attnviz, "heatmaps", "--model", model, *CHAT_ARGS, "--layers", "0", "--format", "html", "-o", f"{out}/turns")
        page = Page(browser, f"{out}/turns/index.html")
        view = text_view(page)
        screenshot(page, "chat_turns.png")
        # The template's text through each turn (BOS added by the tokenizer, as for the run).
        through, counts, previous = "", [], 0
        for role, text in TURNS:
            through += f"[{role}] {text}\n"
            total = token_count(attnviz, through)
            counts.append(total - previous)
            previous = total
        whole = token_count(attnviz, through + "[assistant]</s>")
        expected = [[role, count] for (role, _), count in zip(TURNS, counts)] + [["generation prompt", whole - previous]]
        assert view["lines"] == expected, (view["lines"], expected)
        assert view["spans"] == whole and view["note"] == "", view
        page.check_quiet()
        checks += 1

        other = with_template(out, "system_last", SYSTEM_LAST)
        run(attnviz, "heatmaps", "--model", other, *CHAT_ARGS, "--layers", "0", "--format", "html", "-o", f"{out}/last")
        new_page(browser)
        page = Page(browser, f"{out}/last/index.html")
        view = text_view(page)
        assert view["lines"] == [] and view["spans"] > 0, view
        assert view["note"] == "the turns are not marked: the template does not render the messages in order (message 0, system)", view
        page.check_quiet()
        checks += 1

        run(attnviz, "heatmaps", "--model", model, *CHAT_ARGS, "--max-tokens", "20", "--layers", "0", "--format", "html",
            "-o", f"{out}/cut")
        new_page(browser)
        page = Page(browser, f"{out}/cut/index.html")
        view = text_view(page)
        assert view["lines"] == [] and view["spans"] == 20, view
        assert view["note"] == "the turns are not marked: --max-tokens cut the conversation", view
        page.check_quiet()
        checks += 1
    print(f"chat_turns_test: {checks} passed, 0 failed")


if __name__ == "__main__":
    main()
