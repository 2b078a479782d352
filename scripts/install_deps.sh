#!/usr/bin/env bash
# Installs the Debian packages attnviz needs, only those missing (quick when all are present).
#   scripts/install_deps.sh          build and run
#   scripts/install_deps.sh --test   also what the test suite needs (PyTorch cross-check, fuzzer,
#                                    chromium and firefox-esr for the HTML report, xmllint and
#                                    rsvg-convert for SVG)
#   scripts/install_deps.sh --bench  also what scripts/bench/run.sh needs (the Python peers, hyperfine)
#                                    and model_run.sh's llama.cpp peer: node-llama-cpp's prebuilt CPU
#                                    libraries from npm into scripts/bench/node/node_modules (ignored by git)
set -euo pipefail

packages=(cmake g++ make pkg-config libcli11-dev libeigen3-dev nlohmann-json3-dev libstb-dev catch2
          libsimdjson-dev libpcre2-dev
          libpng-dev fonts-dejavu-core
          libharfbuzz-dev libfribidi-dev libutf8proc-dev libfontconfig-dev libcpp-httplib-dev)
if [[ "${1:-}" == "--test" ]]; then
  packages+=(python3 python3-numpy python3-networkx python3-torch clang libclang-rt-14-dev libomp-dev)
  # The HTML report in real browsers (tests/browser/: chromium over the DevTools pipe, firefox-esr's
  # headless screenshot), SVG checks.
  packages+=(chromium firefox-esr libxml2-utils librsvg2-bin)
  # The census's sharding recipe run for real (tests/census_shards_test.py).
  packages+=(parallel)
fi
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(python3 python3-numpy python3-torch python3-matplotlib libopenblas0-pthread hyperfine time)
  # Debian's npm conflicts with a Node.js installed from elsewhere (NodeSource's carries npm).
  command -v npm >/dev/null || packages+=(nodejs npm)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then sudo=sudo; else sudo=; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [[ "${1:-}" == "--bench" ]]; then
  bench_node="$(cd "$(dirname "$0")" && pwd)/bench/node"
  if [[ ! -d "$bench_node/node_modules/@node-llama-cpp/linux-x64" ]]; then
    echo "installing node-llama-cpp (prebuilt llama.cpp, benchmarks only) into $bench_node"
    # Its postinstall step (which could download or build llama.cpp) is not run: the prebuilt
    # linux-x64 package carries the libraries.
    (cd "$bench_node" && npm install --no-audit --no-fund --ignore-scripts)
  fi
fi
