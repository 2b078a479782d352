// Reading a corpus for census --corpus (issue 22): formats, blank lines, bad lines named by
// line number, --skip-bad-lines, --limit, an empty corpus.
#include "io/corpus_file.hpp"

#include <fstream>

#include "core/error.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::Contains;

namespace {

std::string write(const test::TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.file(name), std::ios::binary) << text;
  return dir.file(name);
}

std::vector<CorpusText> texts_of(const std::string& path, const CorpusSettings& settings = {}) {
  std::vector<CorpusText> texts;
  read_corpus(path, settings, [&](const CorpusText& t) { texts.push_back(t); });
  return texts;
}

}  // namespace

TEST_CASE("corpus_file: plain text is one text per line, blank lines skipped, indices count texts", "[census][io]") {
  test::TempDir dir;
  const std::string path = write(dir, "c.txt", "one\n\n  \ntwo\r\n{\"text\": \"3\"}\n");
  const std::vector<CorpusText> texts = texts_of(path);
  REQUIRE(texts.size() == 3);
  CHECK(*texts[0].text == "one");
  CHECK(*texts[1].text == "two");  // the CR of a CRLF line is not part of the text
  CHECK(texts[1].index == 1);
  CHECK(texts[1].line == 4);
  CHECK(*texts[2].text == "{\"text\": \"3\"}");  // text format: JSON is just text
}

TEST_CASE("corpus_file: JSONL by the name, text or token_ids per line, --corpus-format overrides", "[census][io]") {
  test::TempDir dir;
  const std::string path = write(dir, "c.jsonl", "{\"text\": \"a b\"}\n\n{\"token_ids\": [1, 403]}\n");
  const std::vector<CorpusText> texts = texts_of(path);
  REQUIRE(texts.size() == 2);
  CHECK(*texts[0].text == "a b");
  CHECK(*texts[1].token_ids == std::vector<std::int32_t>{1, 403});
  CHECK(texts_of(path, {"text", false, -1}).size() == 2);  // read as text: each line a text
  CHECK(*texts_of(path, {"text", false, -1})[0].text == "{\"text\": \"a b\"}");
  const std::string named_txt = write(dir, "c.txt", "{\"text\": \"x\"}\n");
  CHECK(*texts_of(named_txt, {"jsonl", false, -1})[0].text == "x");
}

TEST_CASE("corpus_file: each kind of bad JSONL line is named with its line number", "[census][io][errors]") {
  test::TempDir dir;
  const auto bad = [&](const std::string& line, const std::string& why) {
    const std::string path = write(dir, "bad.jsonl", "{\"text\": \"fine\"}\n\n" + line + "\n");
    REQUIRE_THROWS_AS(texts_of(path), InputError);
    REQUIRE_THROWS_WITH(texts_of(path), Contains("bad.jsonl: line 3: ") && Contains(why));
  };
  bad("{\"text\": \"unterminated", "not valid JSON");
  bad("[\"text\"]", "expected a JSON object");
  bad("{\"txt\": \"typo\"}", "has no \"text\"");
  bad("{\"text\": \"\"}", "/text: is empty");
  bad("{\"text\": 42}", "/text: expected a string, got the integer 42");
  bad("{\"token_ids\": []}", "/token_ids: is empty");
  bad("{\"token_ids\": [1, -2]}", "/token_ids/1: expected a token id");
  bad("{\"text\": \"a\", \"token_ids\": [1]}", "both");
  bad("{\"text\": \"\\udcff\"}", "not valid JSON");  // a lone surrogate: nlohmann refuses it
  // nlohmann keeps the last of a repeated key: the line would have run "b" in silence.
  bad("{\"text\": \"a\", \"text\": \"b\"}", "the key \"text\" appears twice in one object");
  bad("{\"text\": \"a\", \"meta\": {\"x\": 1, \"x\": 2}}", "the key \"x\" appears twice");
}

TEST_CASE("corpus_file: --skip-bad-lines skips and counts them, --limit counts after skipping", "[census][io]") {
  test::TempDir dir;
  const std::string path = write(dir, "c.jsonl", "{\"text\": \"a\"}\nnot json\n{\"text\": \"b\"}\n{\"text\": \"c\"}\n");
  CorpusScan scan;
  std::vector<CorpusText> texts;
  scan = read_corpus(path, {"", true, 2}, [&](const CorpusText& t) { texts.push_back(t); });
  REQUIRE(texts.size() == 2);
  CHECK(*texts[1].text == "b");
  CHECK(texts[1].index == 1);
  CHECK(scan.texts == 2);
  REQUIRE(scan.skipped.size() == 1);
  CHECK_THAT(scan.skipped[0], Contains("line 2: not valid JSON"));
}

TEST_CASE("corpus_file: an empty corpus, or one of bad lines only, is refused", "[census][io][errors]") {
  test::TempDir dir;
  REQUIRE_THROWS_WITH(texts_of(write(dir, "empty.txt", "\n \n")), Contains("empty.txt: no texts to run (2 lines: 2 blank, 0 bad)"));
  REQUIRE_THROWS_WITH(read_corpus(write(dir, "bad.jsonl", "x\n"), {"", true, -1}, {}), Contains("no texts to run (1 line: 0 blank, 1 bad)"));
  REQUIRE_THROWS_WITH(texts_of(dir.file("missing.txt")), Contains("missing.txt: cannot read"));
}

TEST_CASE("corpus_file: the fingerprint is the file's bytes", "[census][io]") {
  test::TempDir dir;
  const std::uint64_t a = read_corpus(write(dir, "a.txt", "one\ntwo\n"), {}, {}).fingerprint;
  const std::uint64_t b = read_corpus(write(dir, "b.txt", "one\ntwo\n"), {}, {}).fingerprint;
  const std::uint64_t c = read_corpus(write(dir, "c.txt", "one\ntwO\n"), {}, {}).fingerprint;
  CHECK(a == b);
  CHECK(a != c);
  CHECK(fnv1a(kFnvOffset, "a") == 0xaf63dc4c8601ec8cull);  // the published FNV-1a 64 test vector
}

TEST_CASE("corpus_file: a text line that is not UTF-8 is a bad line", "[census][io][errors]") {
  test::TempDir dir;
  REQUIRE_THROWS_WITH(texts_of(write(dir, "latin1.txt", "fine\ncaf\xe9\n")), Contains("latin1.txt: line 2: the line is not UTF-8 (byte offset 3)"));
}

TEST_CASE("corpus_file: a UTF-8 byte order mark is no part of text 0, in either format", "[census][io]") {
  test::TempDir dir;
  const std::vector<CorpusText> plain = texts_of(write(dir, "bom.txt", "\xEF\xBB\xBFone\ntwo\n"));
  REQUIRE(plain.size() == 2);
  CHECK(*plain[0].text == "one");
  const std::vector<CorpusText> jsonl = texts_of(write(dir, "bom.jsonl", "\xEF\xBB\xBF{\"text\": \"one\"}\n"));
  REQUIRE(jsonl.size() == 1);
  CHECK(*jsonl[0].text == "one");
  // Only at the start of the file: elsewhere it is the text's own character (U+FEFF).
  CHECK(*texts_of(write(dir, "mid.txt", "one\n\xEF\xBB\xBFtwo\n"))[1].text == "\xEF\xBB\xBFtwo");
}

TEST_CASE("corpus_file: a directory is named as one, not as a pipe or device", "[census][io][errors]") {
  test::TempDir dir;
  REQUIRE_THROWS_WITH(texts_of(dir.path().string()), Contains(": is a directory: --corpus takes a file of texts"));
}

TEST_CASE("corpus_file: --limit says whether it cut (a bad line or blank after it is no text)", "[census][io]") {
  test::TempDir dir;
  const std::string path = write(dir, "c.jsonl", "{\"text\": \"a\"}\n{\"text\": \"b\"}\n\nnot json\n");
  CHECK_FALSE(read_corpus(path, {"", false, 2}, {}).cut_by_limit);
  CHECK_FALSE(read_corpus(path, {"", true, 5}, {}).cut_by_limit);
  CHECK(read_corpus(path, {"", false, 1}, {}).cut_by_limit);
  CHECK_FALSE(read_corpus(path, {"", true, -1}, {}).cut_by_limit);
}
