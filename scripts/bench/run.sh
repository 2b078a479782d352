#!/usr/bin/env bash
# attnviz vs the Python pipeline it replaces (issue 7): generates the cases with fixed seeds,
# runs both side by side and writes scripts/bench/RESULTS.md (medians, ratios, versions, machine).
# The whole-model benchmarks (attnviz --model against llama.cpp and a torch peer) are
# scripts/bench/model_run.sh, which writes the "## Whole models" section that this script keeps.
#   scripts/bench/run.sh            (after building build/attnviz; takes ~5 minutes and, for
#                                   one row, half of the machine's memory)
# Needs hyperfine, time, and Debian's python3-torch, python3-matplotlib, python3-numpy,
# libopenblas0-pthread (scripts/install_deps.sh --bench installs them). The peers run on Debian's
# /usr/bin/python3 with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset (so OpenBLAS picks its
# kernels for this CPU itself).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"  # root, attnviz, models and the shared helpers
py="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3"
bench_work attnviz-bench
out="$here/RESULTS.md"
need_attnviz

# profile_median PHASE RUNS CMD...: median seconds of one --profile phase over RUNS runs.
profile_median() {
  local phase=$1 runs=$2; shift 2
  for _ in $(seq "$runs"); do "$@" --profile 2>&1 >/dev/null | awk -v p="$phase" '$2==p {print $3}'; done | median
}
# png_mpx DIR: megapixels of every PNG in DIR (from each IHDR).
png_mpx() { /usr/bin/python3 -c "
import glob, struct, sys
print(f'{sum(w * h for w, h in (struct.unpack(\">II\", open(p, \"rb\").read()[16:24]) for p in glob.glob(sys.argv[1] + \"/*.png\"))) / 1e6:.1f}')" "$1"; }
max_rss_kib() { /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1; }
ms() { /usr/bin/python3 -c "import sys; print(f'{float(sys.argv[1]) * 1e3:.1f}')" "$1"; }

echo "generating cases in $work"
$py "$here/make_case.py" 32 512 8 1 "$work/p1"
$py "$here/make_case.py" 512 768 12 2 "$work/p2"
for n in 16 64 256 1024 4096; do $py "$here/make_case.py" "$n" 512 8 3 "$work/n$n"; done

echo "P1: end to end"
# Interleaved rounds (5 attnviz runs, then 1 Python run, 6 times) so that both sides meet the
# same background load of this shared machine; medians over all runs of each side.
for round in 1 2 3 4 5 6; do
  hyperfine -N --warmup 1 --runs 5 --export-json "$work/p1_attnviz_$round.json" \
    "$attnviz heatmaps $work/p1/sentence.json $work/p1/weights.json -o $work/p1/out" >/dev/null
  hyperfine -N --runs 1 --export-json "$work/p1_python_$round.json" \
    "$py $here/peer_heatmaps.py $work/p1/sentence.json $work/p1/weights.json $work/p1/py" >/dev/null
done
p1_times() {  # p1_times SIDE: median, min and max seconds over every round's runs
  /usr/bin/python3 -c "
import glob, json, statistics, sys
times = [t for f in glob.glob(sys.argv[1]) for t in json.load(open(f))['results'][0]['times']]
print(statistics.median(times), min(times), max(times), len(times))" "$work/p1_$1_*.json"
}
read -r p1_attnviz p1_attnviz_min p1_attnviz_max p1_attnviz_n <<<"$(p1_times attnviz)"
read -r p1_python p1_python_min p1_python_max p1_python_n <<<"$(p1_times python)"

echo "P2: compute, one thread"
p2_attnviz=$(profile_median compute 9 "$attnviz" dump "$work/p2/sentence.json" "$work/p2/weights.json" \
  -o "$work/p2/dump.json" --threads 1)
p2_attnviz_2=$(profile_median compute 9 "$attnviz" dump "$work/p2/sentence.json" "$work/p2/weights.json" \
  -o "$work/p2/dump.json" --threads 2)
$py "$here/peer_mha.py" "$work/p2/sentence.json" "$work/p2/weights.json" 15 >"$work/p2_peer.txt"
g++ -O3 -march=native -DNDEBUG -std=c++20 -I/usr/include/eigen3 "$here/gemm_peak.cpp" -o "$work/gemm_peak"
"$work/gemm_peak" 512 768 >"$work/p2_eigen.txt"
value() { awk -v k="$1" '$1 ~ k {print $2}' "$work"/p2_*.txt; }
p2_torch=$(value torch_mha_seconds)
p2_torch_equal=$(value torch_weights_only_seconds)
eigen_peak=$(value eigen_sgemm_gflops_1024)
numpy_peak=$(value numpy_sgemm_gflops_1024)
projection=$(value eigen_projection_gflops)
peak=$(/usr/bin/python3 -c "import sys; print(max(map(float, sys.argv[1:])))" "$eigen_peak" "$numpy_peak")

echo "P3: load"
p3_attnviz=$(profile_median load 9 "$attnviz" dump "$work/p1/sentence.json" "$work/p1/weights.json" \
  -o "$work/p1/dump.json")
p3_python=$($py -c "
import json, statistics, sys, time
times = []
for _ in range(9):
    start = time.perf_counter()
    with open(sys.argv[1]) as f:
        json.load(f)
    times.append(time.perf_counter() - start)
print(statistics.median(times))" "$work/p1/weights.json")

echo "P4: memory"
p4_rss=$(max_rss_kib "$attnviz" heatmaps "$work/p1/sentence.json" "$work/p1/weights.json" -o "$work/p1/out4")
base_rss=$(max_rss_kib "$attnviz" --version)
read -r inputs_b weights_b images_b largest_b <<<"$(/usr/bin/python3 - "$work/p1" <<'PY'
import glob, json, struct, sys
case = sys.argv[1]
s = json.load(open(f"{case}/sentence.json")); w = json.load(open(f"{case}/weights.json"))
n, d = len(s["embeddings"]), len(s["embeddings"][0])
floats = n * d + sum(len(w[k]) * len(w[k][0]) for k in ("W_Q", "W_K", "W_V")) + 3 * d
sizes = []
for png in glob.glob(f"{case}/out4/*.png"):
    width, height = struct.unpack(">II", open(png, "rb").read()[16:24])
    sizes.append(width * height * 3)
print(floats * 4, w["num_heads"] * n * n * 4, sum(sizes), max(sizes))
PY
)"

echo "scaling"
scaling_rows=""
for n in 16 64 256 1024 4096; do
  runs=3; [[ $n -ge 4096 ]] && runs=1
  case_args=("$work/n$n/sentence.json" "$work/n$n/weights.json" -o "$work/n$n/out")
  row="| $n |"
  for phase in load compute render write; do
    row+=" $(ms "$(profile_median "$phase" "$runs" "$attnviz" heatmaps "${case_args[@]}")") |"
  done
  rss=$(max_rss_kib "$attnviz" heatmaps "${case_args[@]}")
  mpx=$(png_mpx "$work/n$n/out")
  weights_mib=$(/usr/bin/python3 -c "print(f'{8 * $n * $n * 4 / 2**20:.1f}')")
  scaling_rows+="$row $((rss / 1024)) | $weights_mib | $mpx |"$'\n'
done

echo "scaling: the largest n the default memory guard admits (8 heads, d_model 512)"
# The guard's estimate for heatmaps (cli/attention_job.cpp, estimate_bytes): (h + 1)·n² float32
# (weights, and the mask with slack) + Q, K, V projections 3·n·d_model float32, against half of
# physical memory.
n_max=$(/usr/bin/python3 -c "
import math, os
budget = os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') * 0.5
a, b = 9 * 4, 3 * 512 * 4
n = int((-b + math.sqrt(b * b + 4 * a * budget)) / (2 * a))
while a * (n + 1) ** 2 + b * (n + 1) <= budget: n += 1
while a * n * n + b * n > budget: n -= 1
print(n)")
$py "$here/make_case.py" "$((n_max + 1))" 512 8 3 "$work/nmax1"
over_start=$(date +%s.%N)
over_code=0
over_message=$("$attnviz" heatmaps "$work/nmax1/sentence.json" "$work/nmax1/weights.json" -o "$work/nmax1/out" 2>&1) \
  || over_code=$?
over_seconds=$(/usr/bin/python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$over_start" "$(date +%s.%N)")
rm -rf "$work/nmax1"
$py "$here/make_case.py" "$n_max" 512 8 3 "$work/nmax"
/usr/bin/time -f "rss %M" -o "$work/nmax_rss.txt" "$attnviz" heatmaps "$work/nmax/sentence.json" "$work/nmax/weights.json" \
  -o "$work/nmax/out" --profile 2>"$work/nmax_profile.txt" >/dev/null
nmax_row="| $n_max |"
for phase in load compute render write; do
  nmax_row+=" $(ms "$(awk -v p="$phase" '$2==p {print $3}' "$work/nmax_profile.txt")") |"
done
nmax_row+=" $(( $(awk '/^rss/ {print $2}' "$work/nmax_rss.txt") / 1024 )) | $(/usr/bin/python3 -c "print(f'{8 * $n_max ** 2 * 4 / 2**20:.1f}')") | $(png_mpx "$work/nmax/out") |"
nmax_sentence_mb=$(/usr/bin/python3 -c "import os, sys; print(f'{os.path.getsize(sys.argv[1]) / 1e6:.0f}')" "$work/nmax/sentence.json")
rm -rf "$work/nmax"

echo "writing $out"
# The "## Whole models" section at the end is model_run.sh's: kept as it is.
models_section=$(sed -n '/^## Whole models/,$p' "$out" 2>/dev/null || true)
# So is census_bench.sh's "## Census over a corpus" section, before it.
census_section=$(sed -n '/^## Census over a corpus/,/^## Whole models/{/^## Whole models/!p}' "$out" 2>/dev/null || true)
cpu=$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')
cores=$(nproc)
mem=$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)
torch_lib=$($py -c "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cpu.so'))")
torch_blas="$($py -c "import re, torch; m = re.search(r'BLAS_INFO=(\w+)', torch.__config__.show()); print(m.group(1) if m else 'unknown')")"
torch_blas+=", linked to $(ldd "$torch_lib" | awk '/libblas/ {print $3}') -> $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)"
weights_mb=$(/usr/bin/python3 -c "import os, sys; print(f'{os.path.getsize(sys.argv[1]) / 1e6:.1f}')" "$work/p1/weights.json")
dirty=$(git -C "$root" status --porcelain src CMakeLists.txt | grep -q . && echo ", plus uncommitted changes in src/" || true)
versions=$($py -c "import torch, numpy, matplotlib, sys; print(f'Python {sys.version.split()[0]}, torch {torch.__version__}, numpy {numpy.__version__}, matplotlib {matplotlib.__version__}')")
unavoidable=$((inputs_b + weights_b + images_b))
{
  echo "# attnviz vs Python: benchmark results"
  echo
  echo "Generated by \`scripts/bench/run.sh\` on $(date -u +%Y-%m-%d) (commit $(git -C "$root" rev-parse --short HEAD)$dirty), which rewrites this file. Reproduce:"
  echo
  echo '```'
  echo 'bash scripts/install_deps.sh --bench && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2 && scripts/bench/run.sh'
  echo '```'
  echo
  echo "Machine: $cpu, $cores cores, $mem; shared with other jobs (load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)),"
  echo "so absolute times are noisy; both sides ran interleaved in the same run."
  echo "Versions: $("$attnviz" --version), $(g++ --version | head -1), Eigen 3.4, simdjson 3.0.1; $versions;"
  echo "$(hyperfine --version). BLAS: numpy uses $blas (OpenBLAS, pthread build); torch: BLAS_INFO=$torch_blas."
  echo "The peers run on Debian's /usr/bin/python3 with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset."
  echo
  echo "## Targets"
  echo
  echo "| Target | attnviz | Python peer | Ratio | Goal | Met |"
  echo "| --- | --- | --- | --- | --- | --- |"
  echo "| P1 end to end, n = 32, d_model 512, 8 heads: \`heatmaps\` (grid + 8 PNGs) vs json.load + torch MHA + matplotlib grid + 8 PNGs, median wall (hyperfine, interleaved rounds) | $(ms "$p1_attnviz") ms | $(ms "$p1_python") ms | **$(ratio "$p1_python" "$p1_attnviz")× faster** | ≥ 50× | $(met "$(ratio "$p1_python" "$p1_attnviz")" ">=" 50) |"
  echo "| P2 compute, n = 512, d_model 768, 12 heads, one thread: \`--profile\` compute phase vs \`torch.set_num_threads(1)\` MHA forward (need_weights, per head), medians | $(ms "$p2_attnviz") ms | $(ms "$p2_torch") ms | **$(ratio "$p2_attnviz" "$p2_torch")** (attnviz time / torch time) | ≤ 1.0 | $(met "$(ratio "$p2_attnviz" "$p2_torch")" "<=" 1.0) |"
  echo "| P2 projections X·W at that size (Eigen, one core) vs one-core sgemm peak | $projection GFLOP/s | peak $peak GFLOP/s | **$(/usr/bin/python3 -c "print(f'{100 * $projection / $peak:.0f}')")%** | ≥ 60% | $(met "$(/usr/bin/python3 -c "print(100 * $projection / $peak)")" ">=" 60) |"
  echo "| P3 load of the $weights_mb MB weights file (+ 0.3 MB sentence): \`--profile\` load phase vs \`json.load\` in process, medians | $(ms "$p3_attnviz") ms | $(ms "$p3_python") ms | **$(ratio "$p3_python" "$p3_attnviz")× faster** | ≥ 5× | $(met "$(ratio "$p3_python" "$p3_attnviz")" ">=" 5) |"
  echo "| P4 peak RSS of P1 (GNU time) vs unavoidable | $((p4_rss / 1024)) MiB | unavoidable $(/usr/bin/python3 -c "print(f'{$unavoidable / 2**20:.1f}')") MiB | **$(/usr/bin/python3 -c "print(f'{$p4_rss * 1024 / $unavoidable:.2f}')")×** (attnviz / unavoidable) | ≤ 1.5× | $(met "$(/usr/bin/python3 -c "print($p4_rss * 1024 / $unavoidable)")" "<=" 1.5) |"
  echo
  echo "- P1 runs: attnviz $p1_attnviz_n runs, $(ms "$p1_attnviz_min")–$(ms "$p1_attnviz_max") ms; Python $p1_python_n runs, $(ms "$p1_python_min")–$(ms "$p1_python_max") ms;"
  echo "  interleaved in 6 rounds (5 attnviz runs, 1 Python run) so both meet the same background load."
  echo "- P2 one thread on both sides: the peer sets OPENBLAS_NUM_THREADS=1 as well as torch.set_num_threads(1),"
  echo "  because Debian's torch runs its GEMMs in the system OpenBLAS, whose threads torch does not govern."
  echo "- P2 is what the issue names: PyTorch's MHA forward, which also projects V, multiplies by it and applies"
  echo "  W_O. Equal work (Q and K projections, QKᵀ/√d_k, softmax, written out in torch, warm in one process):"
  echo "  $(ms "$p2_torch_equal") ms, so attnviz is **$(ratio "$p2_attnviz" "$p2_torch_equal")×** torch's time for the same weights. attnviz's figure"
  echo "  is a fresh process's compute phase, page faults on its new memory included (~11 ms for 16 MB here);"
  echo "  torch's are repeated calls in one process, whose allocator reuses memory."
  echo "- P2 with \`--threads 2\`: $(ms "$p2_attnviz_2") ms (threads only help when the other core is idle; this machine's often is not)."
  echo "- P2 peak: the faster of Eigen's (scripts/bench/gemm_peak.cpp, $eigen_peak GFLOP/s) and numpy/OpenBLAS's ($numpy_peak GFLOP/s)"
  echo "  one-thread 1024 × 1024 × 1024 float32 product, median of 9. The projection figure is the same Eigen"
  echo "  expression attnviz runs (\`Matrix y = x * w\`), [512, 768] · [768, 768], median of 15."
  echo "- P4 unavoidable = inputs as float32 ($((inputs_b / 1024)) KiB) + h·n·n weights ($((weights_b / 1024)) KiB) + every PNG's RGB raster"
  echo "  ($((images_b / 1024)) KiB; the largest, the grid, $((largest_b / 1024)) KiB). A process that only prints its version already"
  echo "  takes $((base_rss / 1024)) MiB (libraries, font)."
  echo
  echo "## Scaling (\`heatmaps\`, d_model 512, 8 heads)"
  echo
  echo "Phase times are medians of 3 runs (one run for n = 4096 and the last row); peak RSS is one run."
  echo "Render time follows the pixels drawn (grid + 8 heads), not n: cells shrink to fit 4096 px per side,"
  echo "then whole blocks of cells share a pixel, so a 1024-token picture has fewer pixels than a 256-token one."
  echo
  echo "| n | load ms | compute ms | render ms | write ms | peak RSS MiB | h·n² weights MiB | pixels drawn (Mpx) |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  printf "%s" "$scaling_rows"
  echo "$nmax_row"
  echo
  echo "The last row is the largest n the default memory guard (half of physical memory,"
  echo "$(awk '/MemTotal/ {printf "%.1f", $2 / 2097152}' /proc/meminfo) GiB) admits for 8 heads: its sentence file is $nmax_sentence_mb MB, one run. One token more"
  echo "is refused before any compute (exit $over_code, $over_seconds s, most of it reading the file):"
  echo "\`$(echo "$over_message" | tail -1)\`."
  echo
  echo "## Where the time goes (from the profile above)"
  echo
  echo "- load: regular files are mapped, not copied (io/file_text.cpp: reading 17 MB into fresh memory cost"
  echo "  ~15 ms of page faults, mapping ~1.5 ms); simdjson On-Demand (io/fast_json.cpp) walks the document and the"
  echo "  matrix rows are parsed on --threads plain threads straight into float32 matrices; the rest becomes the"
  echo "  nlohmann document the schema code reads, and any irregularity reruns the plain nlohmann path, which"
  echo "  words every error. It is bound by number parsing: 17-digit literals take ~20 ns each in simdjson and in"
  echo "  std::from_chars (fast_float) alike."
  echo "- compute: one GEMM per projection for all heads, then per head QKᵀ, scale, masked softmax; threads"
  echo "  (--threads, default all cores) only where each gets >= 100 Mflop, since on a busy machine a second"
  echo "  thread costs more than it saves at small sizes."
  echo "- render: drawing takes a few ms at n = 32; PNG encoding (libpng, zlib level 1, \"up\" filter) of ~7 Mpixel"
  echo "  (grid + 8 heads, the peer's sizes) dominates P1, on --threads threads. Measured on the P1 grid: libdeflate"
  echo "  level 1 38 ms against zlib's 18 ms (long zero runs), and PNG chunks written by hand over zlib only ~10%"
  echo "  faster than libpng, so libpng stays. Pictures share the weights (no copy per picture), and long inputs are"
  echo "  folded into blocks without a division per cell."
  if [[ -n "$census_section" ]]; then echo; echo "$census_section"; fi
  if [[ -n "$models_section" ]]; then echo; echo "$models_section"; fi
} >"$out"
cat "$out"
