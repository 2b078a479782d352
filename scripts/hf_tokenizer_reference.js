#!/usr/bin/env node
// Writes small tokenizer.json files of the kinds attnviz reads with the tokenizers library's
// pipeline (SentencePiece-style BPE as Llama 2, Mistral, TinyLlama and Gemma ship it; BERT's
// WordPiece), and the ids Hugging Face's own tokenizers library (npm "tokenizers", its Rust code
// through Node) gives for a set of tricky strings, into tests/data/tokenizers/. The tests read
// the committed files and need neither Node nor the library.
//
//   npm install tokenizers            (in a scratch folder outside the repository)
//   NODE_PATH=SCRATCH/node_modules node scripts/hf_tokenizer_reference.js tests/data/tokenizers
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');

const out = process.argv[2];
if (!out) throw new Error('usage: hf_tokenizer_reference.js OUT_DIR');

const SP = '\u2581';
const CORPUS = 'the cat sat on the mat and the dog ran in the sun . she said hello to the world , then ' +
  'they went home . a little girl named lily saw a big tree in the park and she was happy';

// Byte-pair merges learnt from the corpus (most frequent adjacent pair first, ties by first
// seen), over words written as `mark + word` split in characters.
function learnMerges(words, count) {
  let seqs = words.map((w) => Array.from(w));
  const merges = [];
  for (let m = 0; m < count; m++) {
    const freq = new Map();
    for (const s of seqs) for (let i = 0; i + 1 < s.length; i++) {
      const k = s[i] + '\u0000' + s[i + 1];
      freq.set(k, (freq.get(k) || 0) + 1);
    }
    let best = null, bestCount = 0;
    for (const [k, c] of freq) if (c > bestCount) { best = k; bestCount = c; }
    if (!best || bestCount < 2) break;
    const [a, b] = best.split('\u0000');
    merges.push([a, b]);
    seqs = seqs.map((s) => {
      const r = [];
      for (let i = 0; i < s.length; i++) {
        if (i + 1 < s.length && s[i] === a && s[i + 1] === b) { r.push(a + b); i++; } else r.push(s[i]);
      }
      return r;
    });
  }
  return merges;
}

function special(id, content, normalized = false) {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized, special: true };
}

// A SentencePiece-style BPE vocabulary: <unk> <s> </s>, the 256 byte tokens when `bytes`,
// every character of the corpus (and "▁"), then each merge's result.
function spmTokenizer({ bytes, normalizer, pre_tokenizer, decoder, fuse_unk = true, bos = '<s>', extra = [] }) {
  const vocab = {};
  const put = (p) => { if (!(p in vocab)) vocab[p] = Object.keys(vocab).length; };
  ['<unk>', bos, bos === '<s>' ? '</s>' : '<eos>'].forEach(put);
  if (bytes) for (let b = 0; b < 256; b++) put('<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>');
  const words = CORPUS.split(' ').map((w) => SP + w);
  put(SP);
  for (const ch of Array.from(CORPUS.replace(/ /g, ''))) put(ch);
  const merges = learnMerges(words, 60);
  for (const [a, b] of merges) put(a + b);
  const added = [special(0, '<unk>'), special(1, bos), special(2, bos === '<s>' ? '</s>' : '<eos>')];
  for (const content of extra) {
    const id = Object.keys(vocab).length;
    vocab[content] = id;
    added.push({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: false });
  }
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer, pre_tokenizer,
    post_processor: { type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
             { SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { [bos]: { id: bos, ids: [1], tokens: [bos] } } },
    decoder,
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
             fuse_unk, byte_fallback: bytes, ignore_merges: false, vocab, merges },
  };
}

const llamaDecoder = { type: 'Sequence', decoders: [
  { type: 'Replace', pattern: { String: SP }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' },
  { type: 'Strip', content: ' ', start: 1, stop: 0 }] };
const prependReplace = { type: 'Sequence', normalizers: [
  { type: 'Prepend', prepend: SP }, { type: 'Replace', pattern: { String: ' ' }, content: SP }] };

function wordpieceTokenizer({ lowercase, strip_accents, post }) {
  const vocab = {};
  const put = (p) => { if (!(p in vocab)) vocab[p] = Object.keys(vocab).length; };
  ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].forEach(put);
  const text = CORPUS + ' 你 好 世 界 ! ? \' " . , - ( ) 1 2 3 café naive über';
  for (const word of text.split(' ')) {
    const w = lowercase ? word.toLowerCase() : word;
    if (w.length <= 3) put(w); else { put(w.slice(0, 3)); for (let i = 3; i < w.length; i += 2) put('##' + w.slice(i, i + 2)); put(w); }
  }
  for (const ch of 'abcdefghijklmnopqrstuvwxyz') { put(ch); put('##' + ch); }
  if (!lowercase) for (const w of ['The', 'Hello', 'World', 'Lily', 'C', '##AT']) put(w);
  const added = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((c, i) => special(i, c));
  const post_processor = post === 'bert'
    ? { type: 'BertProcessing', sep: ['[SEP]', 3], cls: ['[CLS]', 2] }
    : { type: 'TemplateProcessing',
        single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
        pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
               { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
        special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] } } };
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents, lowercase },
    pre_tokenizer: { type: 'BertPreTokenizer' }, post_processor,
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 12, vocab },
  };
}

const KINDS = {
  // Llama 2 / TinyLlama / Mistral v0.1: Prepend + Replace normalizer, no pre-tokenizer, byte fallback.
  'spm-llama2': spmTokenizer({ bytes: true, normalizer: prependReplace, pre_tokenizer: null, decoder: llamaDecoder, extra: ['<tool>'] }),
  // Newer Llama / Mistral files: a Metaspace pre-tokenizer (prepend_scheme "first", no split) instead.
  'spm-metaspace': spmTokenizer({ bytes: true, normalizer: null,
    pre_tokenizer: { type: 'Metaspace', replacement: SP, prepend_scheme: 'first', split: false },
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: SP }, content: ' ' }, { type: 'ByteFallback' },
      { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] } }),
  // Metaspace splitting into words at each "▁", prepended always.
  'spm-metaspace-split': spmTokenizer({ bytes: true, normalizer: null,
    pre_tokenizer: { type: 'Metaspace', replacement: SP, prepend_scheme: 'always', split: true },
    decoder: { type: 'Metaspace', replacement: SP, prepend_scheme: 'always', split: true } }),
  // Gemma: Replace " " -> "▁" only (no dummy prefix), <bos>.
  'spm-gemma': spmTokenizer({ bytes: true, bos: '<bos>', normalizer: { type: 'Replace', pattern: { String: ' ' }, content: SP },
    pre_tokenizer: null, decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: SP }, content: ' ' },
      { type: 'ByteFallback' }, { type: 'Fuse' }] } }),
  // No byte tokens: characters missing from the vocabulary become <unk>, consecutive ones fused.
  'spm-unk-fused': spmTokenizer({ bytes: false, normalizer: prependReplace, pre_tokenizer: null, decoder: llamaDecoder }),
  'spm-unk-unfused': spmTokenizer({ bytes: false, fuse_unk: false, normalizer: prependReplace, pre_tokenizer: null, decoder: llamaDecoder }),
  // BERT uncased (strip_accents null: follows lowercase) with a TemplateProcessing [CLS] $A [SEP].
  'wordpiece-uncased': wordpieceTokenizer({ lowercase: true, strip_accents: null, post: 'template' }),
  // BERT cased with BertProcessing.
  'wordpiece-cased': wordpieceTokenizer({ lowercase: false, strip_accents: false, post: 'bert' }),
};

const STRINGS = [
  '', ' ', '  ', 'the cat sat on the mat', 'Hello world', ' leading space', 'trailing space ', 'two  spaces',
  'new\nline', 'tab\there', 'cr\r\nlf', 'emoji 🙂 ok 👍🏽', '你好世界', 'café naïve Ünïcödé', 'İstanbul ΣΑΣ',
  'unknown ʬʭ chars', 'zero\u200bwidth', 'bell\u0007char', 'don\'t! (yes) - "no"?', '12345 67', 'the<s>cat</s>',
  '<s> the', '[CLS] the cat [SEP]', 'a[UNK]b [MASK]', 'over<tool>tool', 'supercalifragilisticexpialidocious',
  'sun.sun,sun', 'The Cat SAT', 'ﬁne ﬂy', 'x\u0301y', 'lily\'s  big\n\ntree', '\u00a0nbsp',
];

fs.mkdirSync(out, { recursive: true });
(async () => {
  const version = JSON.parse(fs.readFileSync(require.resolve('tokenizers/package.json'))).version;
  for (const [name, json] of Object.entries(KINDS)) {
    const text = JSON.stringify(json, null, 1) + '\n';
    fs.writeFileSync(path.join(out, name + '.tokenizer.json'), text);
    const tokenizer = Tokenizer.fromString(text);
    const cases = [];
    for (const s of STRINGS) {
      const withSpecial = await tokenizer.encode(s);
      const plain = await tokenizer.encode(s, null, { addSpecialTokens: false });
      cases.push({ text: s, ids: withSpecial.getIds(), ids_without_special: plain.getIds(), tokens: withSpecial.getTokens() });
    }
    const expected = { library: 'tokenizers ' + version + ' (npm), Tokenizer.fromString(file).encode(text)', cases };
    fs.writeFileSync(path.join(out, name + '.expected.json'), JSON.stringify(expected, null, 1) + '\n');
    console.log(name, Object.keys(json.model.vocab).length, 'pieces');
  }
})();
