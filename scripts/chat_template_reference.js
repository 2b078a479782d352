// Writes tests/data/chat-templates/NAME.expected.json: what Hugging Face's own chat-template
// renderer (npm "@huggingface/jinja", the renderer of transformers.js and the Hub) gives for each
// template of templates.json, each conversation, add_generation_prompt true and false, with the
// bos/eos tokens the model names. strftime_now sees the fixed local time templates.json names.
// A template that raises records the error message instead of a text.
// Usage:
//   npm install @huggingface/jinja        (in a scratch folder outside the repository)
//   NODE_PATH=SCRATCH/node_modules TZ=UTC node scripts/chat_template_reference.js tests/data/chat-templates [--check]
// --check writes nothing and exits 1 when a committed file differs from what the renderer gives.
'use strict';
const fs = require('fs');
const path = require('path');

const folder = process.argv[2];
const check = process.argv.includes('--check');
if (!folder) {
  console.error('usage: chat_template_reference.js FOLDER [--check]');
  process.exit(2);
}
const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'templates.json'), 'utf8'));

// A fixed clock: every `new Date()` in the renderer is the manifest's time.
const RealDate = Date;
const fixed = new RealDate(manifest.now).getTime();
global.Date = class extends RealDate {
  constructor(...args) {
    super(...(args.length ? args : [fixed]));
  }
  static now() {
    return fixed;
  }
};

// NODE_PATH's copy, else the one scripts/install_deps.sh installs beside node-llama-cpp.
let modulePath;
for (const candidate of ['@huggingface/jinja',
                         path.join(__dirname, 'bench', 'node', 'node_modules', '@huggingface', 'jinja')]) {
  try {
    modulePath = require.resolve(candidate);
    break;
  } catch (e) {
    // try the next place
  }
}
if (!modulePath) {
  console.log('skipped: npm @huggingface/jinja is not installed (see the usage above)');
  process.exit(77);
}
const { Template } = require(modulePath);
let packageDir = path.dirname(modulePath);
while (!fs.existsSync(path.join(packageDir, 'package.json'))) packageDir = path.dirname(packageDir);
const version = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')).version;

let differences = 0;
for (const entry of manifest.templates) {
  const source = fs.readFileSync(path.join(folder, entry.file), 'utf8');
  const template = new Template(source);
  const cases = [];
  for (const [name, messages] of Object.entries(manifest.conversations)) {
    for (const addGenerationPrompt of [true, false]) {
      const result = { conversation: name, add_generation_prompt: addGenerationPrompt };
      try {
        result.text = template.render({
          messages: JSON.parse(JSON.stringify(messages)),
          bos_token: entry.bos_token,
          eos_token: entry.eos_token,
          add_generation_prompt: addGenerationPrompt,
        });
      } catch (e) {
        result.error = String(e.message);
      }
      cases.push(result);
    }
  }
  const out = path.join(folder, entry.file.replace(/\.jinja$/, '.expected.json'));
  const text = JSON.stringify({ library: '@huggingface/jinja ' + version + ' (npm), new Template(source).render(...)',
                                template: entry.file, cases }, null, 1) + '\n';
  if (check) {
    const committed = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
    if (committed !== text) {
      console.log(`${out}: differs from what @huggingface/jinja ${version} renders`);
      ++differences;
    }
  } else {
    fs.writeFileSync(out, text);
    console.log(`${out}: ${cases.length} renderings (${cases.filter((c) => c.error).length} raised)`);
  }
}
if (check) {
  console.log(`${manifest.templates.length - differences} passed, ${differences} failed`);
  process.exit(differences ? 1 : 0);
}
