#!/usr/bin/env node
// The ids Hugging Face's tokenizers library (npm "tokenizers") gives when the special added tokens
// written in a text are read as plain text (attnviz --no-parse-special on a tokenizer.json; the
// library's encode_special_tokens, transformers' split_special_tokens=True), for the
// tests/data/tokenizers/added-*.tokenizer.json files, into no-parse-special.expected.json.
//
// The npm binding does not expose encode_special_tokens, so each file is loaded with its special
// added tokens left out of "added_tokens": what AddedVocabulary::find_matches then does is what it
// does with encode_special_tokens (a special token's match is passed over and its text stays plain)
// as long as no other added token lies inside a special token's text, which holds for these files.
//
//   npm install tokenizers            (in a scratch folder outside the repository)
//   NODE_PATH=SCRATCH/node_modules node scripts/hf_no_parse_special_reference.js tests/data/tokenizers
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');

const dir = process.argv[2];
if (!dir) throw new Error('usage: hf_no_parse_special_reference.js tests/data/tokenizers');
const version = require('tokenizers/package.json').version;

const TEXTS = {
  'added-llama2': ['<s>the cat</s> <raw> dog', 'a<unk>b<s>', '</s>', 'the <r>sun</s>at'],
  'added-bert': ['[CLS] Café [NEW] hello [SEP]', '[MASK]HELLO[PAD]', '<Cased>[UNK] Über'],
  'added-bytelevel': ['Hi<|endoftext|>ab', '<|endoftext|> café', 'abc<|endoftext|>ok'],
  'added-lowercase': ['<s>AB Cat</s>', 'Sun! [X] <Raw>', '<unk>Zz'],
};

(async () => {
  const files = [];
  for (const [name, texts] of Object.entries(TEXTS)) {
    const json = JSON.parse(fs.readFileSync(path.join(dir, name + '.tokenizer.json'), 'utf8'));
    json.added_tokens = json.added_tokens.filter((t) => !t.special);
    const tokenizer = Tokenizer.fromString(JSON.stringify(json));
    const cases = [];
    for (const text of texts) {
      const withSpecial = await tokenizer.encode(text);
      const plain = await tokenizer.encode(text, null, { addSpecialTokens: false });
      cases.push({ text, ids: withSpecial.getIds(), ids_without_special: plain.getIds() });
    }
    files.push({ file: name + '.tokenizer.json', cases });
  }
  const expected = { library: 'tokenizers ' + version + ' (npm), special added tokens left out of added_tokens', files };
  fs.writeFileSync(path.join(dir, 'no-parse-special.expected.json'), JSON.stringify(expected, null, 1) + '\n');
})();
