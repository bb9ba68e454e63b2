#!/bin/bash
# The bank case's PTX store over-count (issue 28): which lane masks the store probes of bank_column
# see, with and without a keyed update beside the leader's count (after scripts/gpu-e2e.sh built
# mem_access and the agent). Log: bench/gpu/logs/h200-bank-split-028c4dc.log.
G=${GPUBT:-.carry/gpubt/gpubt} B=${B:-/tmp/gpubt-gpu/bin} A=${AGENT:-/tmp/gpubt-gpu/agent/cuda_agent/libgpubt_agent.so}
export GPUBT_AGENT_PATH=$A
L='(active_lanes & ((1 << lane) - 1)) == 0'
for s in \
  "gpu:store:shared:bank_column { if ($L) { @req[active_lanes] = count(); } }" \
  "gpu:store:shared:bank_column { @n = count(); if ($L) { @req[active_lanes] = count(); } }" \
  "gpu:store:shared:bank_column { @k[kernel] = count(); if ($L) { @req[active_lanes] = count(); } }" \
  "gpu:store:shared:bank_column { @k[kernel, lane / 8] = count(); if ($L) { @req[active_lanes] = count(); } }" \
  "gpu:store:shared:bank_column { @k[kernel] = count(); @q[active_lanes] = count(); }" ; do
  echo "== $s"
  timeout 120 $G --gpu-backend=ptx -e "$s" -c $B/mem_access 2>&1 | grep -v "^$" | tail -12
done
