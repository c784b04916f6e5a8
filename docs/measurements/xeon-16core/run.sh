#!/bin/bash
# granule on a larger machine: scaling to 16 cores, KV to 16 cores, the verifier on 8 cores.
# Usage: run.sh GRANULE_BINARY OUTPUT_DIR
# Every step is bounded in time; results go to OUTPUT_DIR as JSON Lines (at most 8 files).
# As run on 2026-11-29 at d2af13a (verify capped at 8 cores, its limit).
set -u
B=${1:?granule binary}; O=${2:?output directory}; mkdir -p "$O"
t0=$(date +%s); step() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }
{ uname -a; nproc; lscpu; grep -m1 -ow rtm /proc/cpuinfo || echo "no rtm flag"; } > "$O/machine.txt" 2>&1
step info;  timeout 45  "$B" info --format json --latency-cpus 16 --samples 5 --round-trips 300 --pair-budget 0.2 > "$O/info.jsonl"
step ipc;   timeout 30  "$B" ipc --runs 4 --seconds 0.2 --format json > "$O/ipc.jsonl"
step scale; timeout 240 "$B" scale --regimes none,bkl,bkl-ticket,bkl-mcs,fine,lockfree,rtm --cores 1,2,3,4,6,8,10,12,14,16 \
                 --delays 0,1000,4000,16000 --warmup 0.2 --seconds 0.3 --format json > "$O/scale.jsonl"
step kv;    timeout 90  "$B" kv --regimes bkl,fine,lockfree --cores 1,2,4,8,16 --workload a --seconds 1 \
                 --warmup 0.3 --format json > "$O/kv.jsonl"
step verify; timeout 60 "$B" verify --regimes all --cores 8 --programs 1500 --fault-injection --format json > "$O/verify.jsonl"
step verify-lockfree; timeout 60 "$B" verify --regimes lockfree --cores 8 --programs 1500 --format json > "$O/verify_lockfree.jsonl"
step done
