#!/bin/bash
# rope_call.sh: one prepared device call for the CUDA RoPE kernel (about 5
# minutes of a 16-core H100/H200 machine). Build posenc first where Go is:
#
#   CGO_ENABLED=0 go build -ldflags='-s -w' -o .gpu/bin/posenc ./cmd/posenc
#
# then run `bash tools/gpu/rope_call.sh` from the repository root on the GPU
# machine, carrying .gpu. It runs tools/gpu/gpu_check.sh:
#   1. verify -gpu of the RoPE specs llama31_8b, phi35_mini (head dim 96)
#      and gptj_6b, and the f16/bf16 copies, then the shapes stage of
#      llama31_8b, llama31_8b_bf16 and phi35_mini (apply and GQA apply_qk,
#      1024 to 65536 tokens, hot and cold, against a device-to-device copy),
#      and torch.compile of HF's RoPE in bf16 (the torch stage);
#   2. the shapes stage again with SHAPES_MODE=bench-graph: the same rows
#      timed as CUDA-graph replays, kernel and copy alike, as Liger-Kernel's
#      figures in the RoPE issue were (graph.txt);
#   3. the shapes stage again for each flag of SWEEP while TOTAL lasts, by
#      default "-DPOSENC_ROPE_ROUND=1 -DPOSENC_ROPE_ROUND=4": the kernel with
#      one and four work items a thread in flight, against two.
# Output: $OUT/main.txt, graph.txt, sweep.txt and logs.tgz (every log).
# TOTAL (default 300) bounds the seconds of the three steps.
set -u
O=${OUT:-/tmp/posenc-rope-call}
mkdir -p "$O"
T0=$(date +%s)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export JOBS=${JOBS:-16} BIN=${BIN:-$PWD/.gpu/bin}
export SHAPES_ZOO="llama31_8b llama31_8b_bf16 phi35_mini"
OUT=/tmp/posenc-r1 BUDGET=$((${TOTAL:-300} * 60 / 100)) VERIFY_TARGETS=cuda-ptx \
	VERIFY_ZOO="llama31_8b phi35_mini gptj_6b" TORCH_DTYPES=bf16 STAGES="facts verify shapes torch" \
	bash "$HERE/gpu_check.sh" . >"$O/main.txt" 2>&1
echo "step 1 done at $(($(date +%s) - T0)) s" >>"$O/main.txt"
L=$((${TOTAL:-300} - ($(date +%s) - T0)))
if ((L > 60)); then
	SHAPES_MODE=bench-graph OUT=/tmp/posenc-rg BUDGET=$L STAGES="shapes" bash "$HERE/gpu_check.sh" . >"$O/graph.txt" 2>&1
else
	echo "graph: skipped, $L s left" >"$O/graph.txt"
fi
n=0
for fl in ${SWEEP--DPOSENC_ROPE_ROUND=1 -DPOSENC_ROPE_ROUND=4}; do
	n=$((n + 1))
	L=$((${TOTAL:-300} - ($(date +%s) - T0)))
	((L > 60)) || { echo "POSENC_NVCC_FLAGS=$fl: skipped, $L s left" >>"$O/sweep.txt"; continue; }
	echo "=== POSENC_NVCC_FLAGS=$fl" >>"$O/sweep.txt"
	POSENC_NVCC_FLAGS=$fl OUT=/tmp/posenc-rs$n BUDGET=$L STAGES="shapes" bash "$HERE/gpu_check.sh" . >>"$O/sweep.txt" 2>&1
done
(cd /tmp && tar czf "$O/logs.tgz" posenc-r1/logs posenc-rg/logs posenc-rs*/logs 2>/dev/null)
