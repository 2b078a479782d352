// llama.cpp's side of the whole-model benchmarks (scripts/bench/model_run.sh), through
// node-llama-cpp's prebuilt CPU libraries (installed by scripts/install_deps.sh --bench into
// scripts/bench/node/, not a dependency of attnviz).
//   node scripts/bench/node/llama_eval.mjs MODEL.gguf IDS [THREADS]
// IDS: comma-separated token ids. Loads the model (CPU only, mmap as llama.cpp's default),
// creates a context of at least the prompt's length with batch size >= the prompt (so the whole
// prompt is one batch, as attnviz's forward pass), evaluates the ids without generating and prints
// one JSON line of seconds: backend (loading the shared libraries), load (llama_model_load),
// context (KV cache, compute buffers), eval (prompt evaluation), all wall time, and cpu (the
// process's user + system CPU time over load + context + eval).
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const [modelPath, idsText, threadsText] = process.argv.slice(2);
const ids = idsText.split(",").map(Number);
const threads = Number(threadsText ?? 1);
const now = () => Number(process.hrtime.bigint()) / 1e9;
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };  // whole process, all threads

let t = now();
const llama = await getLlama({gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true,
                              logLevel: LlamaLogLevel.error, maxThreads: threads});
const backend = now() - t;
t = now();
const cpuStart = cpu();
const model = await llama.loadModel({modelPath, gpuLayers: 0});
const load = now() - t;
t = now();
const size = Math.max(512, ids.length);
const context = await model.createContext({contextSize: size, batchSize: size, threads: {ideal: threads, min: threads},
                                           sequences: 1});
const sequence = context.getSequence();
const contextTime = now() - t;
t = now();
await sequence.evaluateWithoutGeneratingNewTokens(ids);
const evalTime = now() - t;
const cpuTime = cpu() - cpuStart;  // CPU seconds of load + context + eval
console.log(JSON.stringify({backend, load, context: contextTime, eval: evalTime, cpu: cpuTime, tokens: ids.length,
                            threads: context.currentThreads, flash_attention: context.flashAttention ?? null,
                            build: llama.buildType, cpu_variant: llama.cpuMathCores ?? null}));
await context.dispose();
await model.dispose();
await llama.dispose();
