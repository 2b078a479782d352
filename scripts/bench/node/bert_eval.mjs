// llama.cpp's side of a BERT benchmark (issue 25), as llama_eval.mjs is for decoders: an encoder
// runs through an embedding context (llama_encode), one batch holding every id, one thread.
//   node scripts/bench/node/bert_eval.mjs MODEL.gguf IDS [THREADS]
// Prints one JSON line of seconds: load (llama_model_load), context (buffers), eval (the encode),
// all wall time, and cpu (the process's user + system CPU time over load + context + eval). The
// model's context_length must exceed the ids by one (node-llama-cpp keeps one cell spare): write
// a 512-token benchmark model with bert_gguf_writer.py --context 1024.
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const [modelPath, idsText, threadsText] = process.argv.slice(2);
const ids = idsText.split(",").map(Number);
const threads = Number(threadsText ?? 1);
const now = () => Number(process.hrtime.bigint()) / 1e9;
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

const llama = await getLlama({gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true,
                              logLevel: LlamaLogLevel.error, maxThreads: threads});
let t = now();
const cpuStart = cpu();
const model = await llama.loadModel({modelPath, gpuLayers: 0});
const load = now() - t;
t = now();
const size = 2 * Math.max(512, ids.length);
const context = await model.createEmbeddingContext({contextSize: size, batchSize: size, threads});
const contextTime = now() - t;
t = now();
await context.getEmbeddingFor(ids);
const evalTime = now() - t;
console.log(JSON.stringify({load, context: contextTime, eval: evalTime, cpu: cpu() - cpuStart, tokens: ids.length, threads}));
await context.dispose();
