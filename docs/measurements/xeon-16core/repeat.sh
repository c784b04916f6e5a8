#!/bin/bash
# Repeat the KV points at 8 and 16 cores (3 runs each) and scale at delay 0; as run on 2026-11-29 at a4942f2.
set -u
B=${1:?granule binary}; O=${2:?output directory}; mkdir -p "$O"
t0=$(date +%s); step() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }
step kv;     timeout 150 "$B" kv --regimes bkl,fine,lockfree --cores 8,16 --runs 3 --workload a --seconds 1 --warmup 0.3 --format json > "$O/kv_repeat.jsonl"
step kvprof; timeout 60 "$B" kv --regimes fine,lockfree --cores 16 --workload a --seconds 1 --warmup 0.3 --lock-stats --format json > "$O/kv_profiled.jsonl"
step scale;  timeout 60 "$B" scale --regimes fine,lockfree --cores 1,2,16 --delays 0 --runs 3 --warmup 0.2 --seconds 0.3 --format json > "$O/scale_repeat.jsonl"
step done
