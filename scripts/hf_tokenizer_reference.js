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

// Added tokens beyond the special ones, each also a piece of the model's vocabulary (as
// tokenizers' add_tokens keeps the vocabulary's id): a string is a plain token matched in the raw
// text; an object gives the AddedToken's options.
function addExtra(vocab, added, extra) {
  for (const e of extra) {
    const token = Object.assign({ single_word: false, lstrip: false, rstrip: false, normalized: false, special: false },
      typeof e === 'string' ? { content: e } : e);
    const id = Object.keys(vocab).length;
    vocab[token.content] = id;
    added.push({ id, content: token.content, single_word: token.single_word, lstrip: token.lstrip, rstrip: token.rstrip,
                 normalized: token.normalized, special: token.special });
  }
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
  addExtra(vocab, added, extra);
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

function wordpieceTokenizer({ lowercase, strip_accents, post, extra = [] }) {
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
  addExtra(vocab, added, extra);
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

// GPT-2's bytes_to_unicode: every byte as one visible character ("Ġ" for a space).
function byteChars() {
  const chars = [];
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
    chars.push(String.fromCodePoint(printable ? b : next++));
  }
  return chars;
}

// A byte-level BPE (GPT-2's kind): the 256 byte characters, merges learnt from the corpus's
// words written with "Ġ" for their space, GPT-2's ByteLevel pre-tokenizer.
function byteLevelTokenizer({ normalizer, extra = [] }) {
  const vocab = {};
  const put = (p) => { if (!(p in vocab)) vocab[p] = Object.keys(vocab).length; };
  byteChars().forEach(put);
  const merges = learnMerges(CORPUS.split(' ').map((w) => '\u0120' + w), 40);
  for (const [a, b] of merges) put(a + b);
  const added = [];
  addExtra(vocab, added, extra);
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
             fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges },
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
  // Issue 37: added tokens matched in the normalized text ("normalized": true, their content
  // normalized too) or in the raw text, with single_word, lstrip and rstrip, beside each kind of
  // normalizer. Each kind's own strings (ADDED_STRINGS) exercise its tokens.
  'added-lowercase': spmTokenizer({ bytes: true, normalizer: { type: 'Lowercase' },
    pre_tokenizer: { type: 'Metaspace', replacement: SP, prepend_scheme: 'first', split: true }, decoder: llamaDecoder,
    extra: [{ content: 'AB', normalized: true }, '<Raw>', { content: 'Cat', normalized: true, single_word: true },
            { content: '[X]', normalized: true, lstrip: true }, { content: '[Y]', rstrip: true },
            { content: 'Zz', normalized: true, lstrip: true, rstrip: true }, { content: 'Sun!', normalized: true, special: true }] }),
  'added-bert': wordpieceTokenizer({ lowercase: true, strip_accents: null, post: 'template',
    extra: [{ content: 'Café', normalized: true }, '[NEW]', { content: 'HELLO', normalized: true, single_word: true },
            { content: '你好', normalized: true }, { content: 'Über', normalized: true, lstrip: true, rstrip: true },
            { content: '<Cased>', normalized: false, single_word: true }] }),
  'added-llama2': spmTokenizer({ bytes: true, normalizer: prependReplace, pre_tokenizer: null, decoder: llamaDecoder,
    extra: [{ content: 'the', normalized: true }, '<raw>', { content: 'dog', normalized: true, single_word: true },
            { content: 'sun', normalized: true, lstrip: true }, { content: '<r>', lstrip: true, rstrip: true },
            { content: SP + 'cat', normalized: true }, { content: 'at', normalized: false }] }),
  'added-sequence': spmTokenizer({ bytes: true,
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Lowercase' }, { type: 'Replace', pattern: { String: 'q' }, content: '' }] },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Metaspace', replacement: SP, prepend_scheme: 'first', split: false }] },
    decoder: llamaDecoder,
    extra: [{ content: 'ＡＢ', normalized: true }, { content: 'Ⅻ', normalized: true, single_word: true }, '<SEP>',
            { content: 'Tree', normalized: true, rstrip: true }, { content: 'Qsun', normalized: true }] }),
  'added-nfkc': spmTokenizer({ bytes: true, normalizer: { type: 'NFKC' },
    pre_tokenizer: { type: 'Metaspace', replacement: SP, prepend_scheme: 'always', split: true }, decoder: llamaDecoder,
    extra: [{ content: 'ﬁ', normalized: true }, { content: '①', normalized: true, lstrip: true }, 'ﬂ',
            { content: 'Å', normalized: true, single_word: true }] }),
  // Byte-level BPE with an NFC normalizer (Qwen 2's): raw tokens are split out before normalized
  // ones ("ab" before "abc"), a normalized "é" also matches "e" + U+0301.
  'added-bytelevel': byteLevelTokenizer({ normalizer: { type: 'NFC' },
    extra: [{ content: '<|endoftext|>', special: true }, 'ab', { content: 'abc', normalized: true },
            { content: 'caf\u00e9', normalized: true }, { content: 'Hi', lstrip: true, rstrip: true },
            { content: 'ok', normalized: true, single_word: true }] }),
  // Metaspace's prepend_scheme "first" after the added tokens are split out, and after a
  // normalizer that deletes the text's first character (BertNormalizer's clean_text, a Replace
  // by nothing): the library then does not count the section as first.
  'metaspace-first-added': spmTokenizer({ bytes: true,
    normalizer: { type: 'Sequence', normalizers: [{ type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null,
      lowercase: true }, { type: 'Replace', pattern: { String: 'q' }, content: '' }] },
    pre_tokenizer: { type: 'Metaspace', replacement: SP, prepend_scheme: 'first', split: true }, decoder: llamaDecoder,
    extra: ['<t>', { content: 'cat', normalized: true, lstrip: true }] }),
};

const ADDED_STRINGS = [
  'AB ab Ab aB', 'xABy', 'Cat cat CAT concatenate cats', 'a [X] b [x]  [X]', '<Raw> <raw>', '[Y]   z [y]  z', ' Zz  zz ',
  'Sun! sun!', 'Café cafe CAFÉ café', 'say HELLO hello helloworld', '你好世界 你好', '[NEW] [new]', 'x  Über  y über',
  '<Cased> a<Cased>', 'the cat', 'cat the', 'bathe', 'the<raw>the', ' the', 'hot dog dogs', '  sun sunny', 'a <r>  b',
  'x  <r>', 'cat  cat', 'ＡＢ ab AB', 'Ⅻ xii aⅫ', 'q<SEP>q', 'Tree  tree ', 'qsun sun Qsun', 'ﬁne fine', '① 1 x①', 'ﬂy fly', 'Å Å Å',
  'abc xabcd', 'cafe\u0301 caf\u00e9', 'a  Hi  b', 'ok okay ok!', 'the<|endoftext|>cat',
  '<t>the cat', 'the<t>cat', ' <t> the', '\u0007the cat', 'qthe cat', '\u0301the', 'the  cat', 'cat', '<t>',
];

const STRINGS = [
  '', ' ', '  ', 'the cat sat on the mat', 'Hello world', ' leading space', 'trailing space ', 'two  spaces',
  'new\nline', 'tab\there', 'cr\r\nlf', 'emoji 🙂 ok 👍🏽', '你好世界', 'café naïve Ünïcödé', 'İstanbul ΣΑΣ',
  'unknown ʬʭ chars', 'zero\u200bwidth', 'bell\u0007char', 'don\'t! (yes) - "no"?', '12345 67', 'the<s>cat</s>',
  '<s> the', '[CLS] the cat [SEP]', 'a[UNK]b [MASK]', 'over<tool>tool', 'supercalifragilisticexpialidocious',
  'sun.sun,sun', 'The Cat SAT', 'ﬁne ﬂy', 'x\u0301y', 'lily\'s  big\n\ntree', '\u00a0nbsp',
];

// Issue 37: one-member edits (RFC 6902 JSON patches) of the files above that the library
// refuses when it loads them, or reads in a way worth checking; each with the library's verdict
// (its error message, or the ids of VARIANT_STRINGS). Written to variants.expected.json.
const metaspaceAt = (at, members) => [{ op: 'replace', path: at, value: Object.assign({ type: 'Metaspace', replacement: SP }, members) }];
const PRE = '/pre_tokenizer';
const VARIANTS = [
  ['always, split', 'spm-metaspace', metaspaceAt(PRE, { prepend_scheme: 'always', split: true })],
  ['first, split', 'spm-metaspace', metaspaceAt(PRE, { prepend_scheme: 'first', split: true })],
  ['never', 'spm-metaspace', metaspaceAt(PRE, { prepend_scheme: 'never', split: false })],
  ['legacy add_prefix_space true', 'spm-metaspace', metaspaceAt(PRE, { add_prefix_space: true })],
  ['add_prefix_space true beside never', 'spm-metaspace', metaspaceAt(PRE, { add_prefix_space: true, prepend_scheme: 'never' })],
  ['add_prefix_space true beside first', 'spm-metaspace', metaspaceAt(PRE, { add_prefix_space: true, prepend_scheme: 'first', split: false })],
  ['add_prefix_space false beside never', 'spm-metaspace', metaspaceAt(PRE, { add_prefix_space: false, prepend_scheme: 'never' })],
  ['add_prefix_space null', 'spm-metaspace', metaspaceAt(PRE, { add_prefix_space: null, prepend_scheme: 'first' })],
  ['split null, str_rep', 'spm-metaspace', metaspaceAt(PRE, { split: null, str_rep: SP, prepend_scheme: 'always' })],
  ['another replacement', 'spm-metaspace', metaspaceAt(PRE, { replacement: 'a', prepend_scheme: 'always' })],
  ['legacy add_prefix_space false', 'spm-metaspace', metaspaceAt(PRE, { add_prefix_space: false })],
  ['add_prefix_space false beside always', 'spm-metaspace', metaspaceAt(PRE, { add_prefix_space: false, prepend_scheme: 'always' })],
  ['add_prefix_space false beside first', 'spm-metaspace', metaspaceAt(PRE, { add_prefix_space: false, prepend_scheme: 'first' })],
  ['prepend_scheme null', 'spm-metaspace', metaspaceAt(PRE, { prepend_scheme: null })],
  ['prepend_scheme Always', 'spm-metaspace', metaspaceAt(PRE, { prepend_scheme: 'Always' })],
  ['replacement missing', 'spm-metaspace', [{ op: 'remove', path: PRE + '/replacement' }]],
  ['replacement of two characters', 'spm-metaspace', [{ op: 'replace', path: PRE + '/replacement', value: SP + SP }]],
  ['replacement empty', 'spm-metaspace', [{ op: 'replace', path: PRE + '/replacement', value: '' }]],
  ['replacement null', 'spm-metaspace', [{ op: 'replace', path: PRE + '/replacement', value: null }]],
  ['split a string', 'spm-metaspace', [{ op: 'replace', path: PRE + '/split', value: 'no' }]],
  ['str_rep a number', 'spm-metaspace', [{ op: 'add', path: PRE + '/str_rep', value: 1 }]],
  ['add_prefix_space a string', 'spm-metaspace', [{ op: 'add', path: PRE + '/add_prefix_space', value: 'yes' }]],
  ['in a Sequence', 'spm-metaspace', [{ op: 'replace', path: PRE, value: { type: 'Sequence', pretokenizers: [
    { type: 'Metaspace', replacement: SP, add_prefix_space: false, prepend_scheme: 'always' }] } }]],
  ['decoder', 'spm-metaspace-split', [{ op: 'add', path: '/decoder/add_prefix_space', value: false }]],
  ['decoder in a Sequence', 'spm-metaspace', [{ op: 'replace', path: '/decoder/decoders/0', value:
    { type: 'Metaspace', replacement: SP, add_prefix_space: false, prepend_scheme: 'first' } }]],
  ['decoder without replacement', 'spm-metaspace-split', [{ op: 'remove', path: '/decoder/replacement' }]],
  ['version 2.0', 'spm-llama2', [{ op: 'replace', path: '/version', value: '2.0' }]],
  ['added token without lstrip', 'spm-llama2', [{ op: 'remove', path: '/added_tokens/3/lstrip' }]],
  ['added token without normalized', 'spm-llama2', [{ op: 'remove', path: '/added_tokens/3/normalized' }]],
  ['added token without special', 'spm-llama2', [{ op: 'remove', path: '/added_tokens/0/special' }]],
  ['added token normalized null', 'spm-llama2', [{ op: 'replace', path: '/added_tokens/3/normalized', value: null }]],
  ['Prepend without prepend', 'spm-llama2', [{ op: 'remove', path: '/normalizer/normalizers/0/prepend' }]],
  ['Replace without content', 'spm-llama2', [{ op: 'remove', path: '/normalizer/normalizers/1/content' }]],
  ['BertNormalizer without clean_text', 'wordpiece-uncased', [{ op: 'remove', path: '/normalizer/clean_text' }]],
  ['BertNormalizer without strip_accents', 'wordpiece-uncased', [{ op: 'remove', path: '/normalizer/strip_accents' }]],
  ['BertNormalizer lowercase null', 'wordpiece-uncased', [{ op: 'replace', path: '/normalizer/lowercase', value: null }]],
  ['ByteLevel pre-tokenizer without trim_offsets', 'added-bytelevel', [{ op: 'remove', path: '/pre_tokenizer/trim_offsets' }]],
  ['Split without invert', 'added-bytelevel', [{ op: 'replace', path: '/pre_tokenizer', value: { type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { Regex: '\\s+' }, behavior: 'Isolated' },
    { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] } }]],
  ['ByteLevel post-processor without add_prefix_space', 'added-bytelevel', [{ op: 'remove', path: '/post_processor/add_prefix_space' }]],
  ['ByteLevel decoder without trim_offsets', 'added-bytelevel', [{ op: 'remove', path: '/decoder/trim_offsets' }]],
  ['Replace decoder without content', 'spm-llama2', [{ op: 'remove', path: '/decoder/decoders/0/content' }]],
  ['TemplateProcessing without pair', 'spm-llama2', [{ op: 'remove', path: '/post_processor/pair' }]],
  ['BertProcessing without cls', 'wordpiece-cased', [{ op: 'remove', path: '/post_processor/cls' }]],
  ['WordPiece without unk_token', 'wordpiece-uncased', [{ op: 'remove', path: '/model/unk_token' }]],
  ['WordPiece without max_input_chars_per_word', 'wordpiece-uncased', [{ op: 'remove', path: '/model/max_input_chars_per_word' }]],
  ['BPE without merges', 'spm-llama2', [{ op: 'remove', path: '/model/merges' }]],
];
const VARIANT_STRINGS = ['', 'hello world', ' the cat', 'the  sun', 'the</s>cat sat', '</s>the cat', '[SEP]the'];

// `json` with RFC 6902 operations add, replace and remove applied (paths of plain keys and indices).
function patched(json, ops) {
  const copy = JSON.parse(JSON.stringify(json));
  for (const { op, path: at, value } of ops) {
    const keys = at.split('/').slice(1);
    const last = keys.pop();
    const parent = keys.reduce((o, k) => o[k], copy);
    if (op === 'remove') delete parent[last]; else parent[last] = value;
  }
  return copy;
}

async function writeVariants(version) {
  const variants = [];
  for (const [name, base, patch] of VARIANTS) {
    const text = JSON.stringify(patched(KINDS[base], patch));
    let tokenizer = null, library_error = null;
    try { tokenizer = Tokenizer.fromString(text); } catch (e) { library_error = String(e.message || e); }
    const cases = [];
    if (tokenizer) for (const s of VARIANT_STRINGS) {
      const withSpecial = await tokenizer.encode(s);
      const plain = await tokenizer.encode(s, null, { addSpecialTokens: false });
      cases.push({ text: s, ids: withSpecial.getIds(), ids_without_special: plain.getIds(), tokens: withSpecial.getTokens() });
    }
    variants.push({ name, base, patch, accepted: !library_error, library_error, cases });
  }
  const expected = { library: 'tokenizers ' + version + ' (npm), Tokenizer.fromString(base + patch).encode(text)', variants };
  fs.writeFileSync(path.join(out, 'variants.expected.json'), JSON.stringify(expected, null, 1) + '\n');
  console.log('variants', variants.length, 'of which refused', variants.filter((v) => !v.accepted).length);
}

fs.mkdirSync(out, { recursive: true });
(async () => {
  const version = JSON.parse(fs.readFileSync(require.resolve('tokenizers/package.json'))).version;
  for (const [name, json] of Object.entries(KINDS)) {
    const text = JSON.stringify(json, null, 1) + '\n';
    fs.writeFileSync(path.join(out, name + '.tokenizer.json'), text);
    const tokenizer = Tokenizer.fromString(text);
    const cases = [];
    for (const s of name.startsWith('added-') || name.startsWith('metaspace-first') ? STRINGS.concat(ADDED_STRINGS) : STRINGS) {
      const withSpecial = await tokenizer.encode(s);
      const plain = await tokenizer.encode(s, null, { addSpecialTokens: false });
      cases.push({ text: s, ids: withSpecial.getIds(), ids_without_special: plain.getIds(), tokens: withSpecial.getTokens() });
    }
    const expected = { library: 'tokenizers ' + version + ' (npm), Tokenizer.fromString(file).encode(text)', cases };
    fs.writeFileSync(path.join(out, name + '.expected.json'), JSON.stringify(expected, null, 1) + '\n');
    console.log(name, Object.keys(json.model.vocab).length, 'pieces');
  }
  await writeVariants(version);
})();
