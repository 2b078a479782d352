"""--chat, --chat-role, --messages end to end (issue 34): stories260K with a chat template added
(scripts/gguf_add_chat_template.py) gives, through `tokenize`, the ids of the rendered text as
llama.cpp tokenizes a chat prompt (the template's leading "<s>" dropped, BOS added once), and
`dump` records the rendering; models without a template, templates beyond the subset and
conflicting flags are refused naming the file, the line or the flags.
Usage: chat_cli_test.py ATTNVIZ REPO"""
import json
import os
import subprocess
import sys
import tempfile

attnviz, repo = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(repo, "scripts"))
from gguf_add_chat_template import copy_with_string  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402
stories = os.path.join(repo, "data", "stories260k", "stories260K.gguf")
check = Checks("chat_cli_test")


def run(*args):
    result = subprocess.run([attnviz, *args], capture_output=True, text=True)
    return result.returncode, result.stdout, result.stderr


def ids(*args):
    code, out, err = run("tokenize", *args, "--json")
    if code != 0:
        raise SystemExit("tokenize %s failed: %s" % (args, err))
    return json.loads(out)["token_ids"]


def with_template(folder, name, template):
    model = os.path.join(folder, name + ".gguf")
    copy_with_string(stories, model, template)
    return model


with tempfile.TemporaryDirectory() as tmp:
    model = with_template(tmp, "chat", "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n"
                                       "{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}{{ eos_token }}")
    rendered = "[user] Once upon a time\n[assistant]</s>"
    chat = ids("--model", model, "--chat", "Once upon a time")
    check("one BOS, template's <s> dropped", chat.count(1) == 1 and chat[0] == 1, str(chat))
    check("ids of the rendered text", chat == ids("--model", stories, "--text", rendered), str(chat))
    check("no generation prompt",
          ids("--model", model, "--chat", "Once upon a time", "--no-add-generation-prompt") ==
          ids("--model", stories, "--text", "[user] Once upon a time\n</s>"))
    check("turns in the order given",
          ids("--model", model, "--chat-role", "system=Be kind.", "--chat", "Hi", "--chat-role", "assistant=Hello") ==
          ids("--model", stories, "--text", "[system] Be kind.\n[user] Hi\n[assistant] Hello\n[assistant]</s>"))
    check("--no-bos keeps the template's text", ids("--model", model, "--chat", "Hi", "--no-bos") ==
          ids("--model", stories, "--no-bos", "--text", "<s>[user] Hi\n[assistant]</s>"))
    messages = os.path.join(tmp, "conversation.json")
    with open(messages, "w") as f:
        json.dump([{"role": "user", "content": "Once upon a time"}], f)
    check("--messages", ids("--model", model, "--messages", messages) == chat)

    out = os.path.join(tmp, "dump.json")
    code, _, err = run("dump", "--model", model, "--chat", "Once upon a time", "--layers", "0", "-o", out)
    check("dump runs", code == 0, err)
    if code == 0:
        with open(out) as f:
            dump = json.load(f)
        check("dump's chat_prompt", dump.get("chat_prompt") == "<s>" + rendered, repr(dump.get("chat_prompt")))
        check("dump's ids", dump["token_ids"] == chat)

    code, _, err = run("tokenize", "--model", stories, "--chat", "Hi")
    check("no template: refused naming the file", code == 1 and stories + ": has no chat template" in err, err)
    bad = with_template(tmp, "bad", "{% for m in messages %}\n{{ m.content | wordwrap }}\n{% endfor %}")
    code, _, err = run("tokenize", "--model", bad, "--chat", "Hi")
    check("unsupported filter: refused with its line",
          code == 1 and "tokenizer.chat_template: line 2, column 16: the filter `wordwrap` is not supported" in err, err)
    raising = with_template(tmp, "raising", "{{ raise_exception('Only user and assistant roles are supported!') }}")
    code, _, err = run("tokenize", "--model", raising, "--chat-role", "system=x")
    check("raise_exception: its message", code == 1 and "Only user and assistant roles are supported!" in err, err)
    code, _, err = run("tokenize", "--model", model, "--chat", "Hi", "--text", "Hi")
    check("--chat with --text refused", code == 1 and "not both" in err, err)
    code, _, err = run("tokenize", "--model", model, "--chat", "Hi", "--no-parse-special")
    check("--chat with --no-parse-special refused", code == 1 and "--no-parse-special" in err, err)
    code, _, err = run("tokenize", "--model", model, "--chat-role", "Hi")
    check("--chat-role without ROLE=", code != 0 and "ROLE=TEXT" in err, err)
    with open(messages, "w") as f:
        json.dump([{"content": "Hi"}], f)
    code, _, err = run("tokenize", "--model", model, "--messages", messages)
    check("--messages without a role: names the file and the message", code == 1 and messages + ": /0/role: missing field" in err, err)

check.finish()
