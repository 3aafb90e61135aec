#!/bin/bash
# attn_call.sh: one prepared device call for the CUDA attention (about 8
# minutes of a 16-core H100/H200 machine). Build posenc first where Go is:
#
#   CGO_ENABLED=0 go build -ldflags='-s -w' -o .gpu/bin/posenc ./cmd/posenc
#
# then run `bash tools/gpu/attn_call.sh` from the repository root on the GPU
# machine, carrying .gpu. It runs tools/gpu/gpu_check.sh several times:
#   1. (in the background, CPU only) regs: nvcc -Xptxas -v of the attention
#      kernels of the bf16 specs below, as built and with
#      -DPOSENC_ATTN_MMA_KEYS=64 (ptxas counts static shared
#      memory only: the tensor-core kernel's tiles are its dynamic 42 or
#      84 KiB), and with -DPOSENC_ATTN_MMA_ROW_TILES=2, all in regs.txt;
#      and the SASS of the first and last builds (sass.tgz);
#   2. verify -gpu of six zoo specs and the f16/bf16 copies (the tensor-core
#      kernel is checked on the device by the bf16 copies' prefill cases),
#      then bench -gpu -attention of bloom_7b1_bf16 (ALiBi), t5_wide_bf16
#      (T5 buckets at 32 heads x 128), llama31_8b_bf16 (rope; its rotated
#      prefill is the no-bias kernel) and t5_base_bf16, then torch's cuDNN
#      SDPA and FlexAttention (bf16; prefill 2048 and 8192; CUDA-graph
#      replays, as the issue's figures);
#   Steps 3 to 6 then start together: their nvcc builds run side by side
#   on the CPUs and their timings one at a time (POSENC_GPU_LOCK, which
#   bench -gpu takes between its builds and its first launch), each
#   bounded by what is left of TOTAL.
#   3. (PROFILE=0: skipped) Nsight Compute's ncu on the
#      decode and tensor-core kernels of one bench -gpu -attention -reps 1
#      run of llama31_8b_bf16 (gpu_check.sh's profile stage): profile.txt;
#   4. bench -gpu -attention of llama31_8b_bf16 and bloom_7b1_bf16 once per
#      flag of SWEEP (each a build of about a minute, then some 20 s of
#      timing). By default
#      SWEEP="-DPOSENC_SWEEP_BASELINE -DPOSENC_ATTN_MMA_ROW_TILES=2
#      -DPOSENC_ATTN_MMA_ROW_TILES=2,-DPOSENC_ATTN_MMA_KEYS=64
#      -DPOSENC_ATTN_MMA_MIN_BLOCKS=3
#      -DPOSENC_ATTN_DECODE_LANE_TURN=0 -DPOSENC_ATTN_MMA_KEYS=64
#      -DPOSENC_ATTN_MMA_KEYS=64,-DPOSENC_ATTN_MMA_WARPS=8
#      -DPOSENC_ATTN_DECODE_WAVE_FIT=0 -DPOSENC_ATTN_TURN_ONCE_BYTES=0" (an
#      entry's flags joined by commas): the default build (a macro no
#      template reads), timed as the others are, beside their builds, which
#      step 2's rows are not; the tensor-core kernel with two m16 tiles of
#      rows a warp (32 rows, 128 a block), with key tiles of 32 and of 64;
#      the tensor-core kernel held three blocks an
#      SM (its registers capped near 170 a thread, not 255); the decode
#      kernel's rope-inside keys staged through shared memory
#      (not turned in the lanes' registers), the tensor-core kernel's key
#      tiles of 64 (not 32), and with tiles of 128 rows (8 warps, not 4),
#      the decode split's count from its target alone
#      (not fitted to the device's waves), and rope inside with its keys
#      turned in the tiles (not once ahead); others are
#      -DPOSENC_ATTN_MMA_TWO_PART_KEYS=2147483647 (p in three bf16 parts at
#      every length), -DPOSENC_ATTN_MMA_LDMATRIX=0 (element loads),
#      -DPOSENC_ATTN_DECODE_ONE_ROW=0,
#      -DPOSENC_ATTN_DECODE_MMA_ROWS=0 (or =4), -DPOSENC_ATTN_MMA_ASYNC=0
#      (the 2026-11-28 sweep, docs/gpu.md) and
#      -DPOSENC_ATTN_DECODE_MIN_CHUNK=8; SWEEP="" runs none.
#   5. bench -gpu -attention of bloom_7b1_bf16 and t5_wide_bf16 built with
#      -DPOSENC_ATTN_MMA=0 (the FMA kernel's prefill, for the ratio);
#   6. compute-sanitizer (memcheck, racecheck, synccheck) on every attention
#      launcher of llama31_8b_bf16 and bloom_7b1_bf16 on small odd shapes
#      (gpu_check.sh's sanitize stage; the shared-memory races and barriers
#      host emulation cannot judge): sanitize.txt.
# Output (7 files: the device tool brings back 8 at most): $OUT/main.txt,
# regs.txt (the three builds' ptxas counts, one after the other),
# profile.txt, sweep.txt (step 5's rows at its end), sanitize.txt,
# logs.tgz (every log) and sass.tgz (cuobjdump -sass of the attention
# kernels of the default and ROW_TILES=2 builds of step 1, a .sass.gz a
# spec: the instructions ptxas made, to read where no GPU is). TOTAL
# (default 560) bounds the seconds of steps 2 to 5:
# about 300 s for steps 3 to 6 after a main step of 250 (under 150 s left,
# they are skipped; a step whose timing does not get the lock in time is
# cut off, its rows so far kept).
set -u
O=${OUT:-/tmp/posenc-attn-call}
mkdir -p "$O"
T0=$(date +%s)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export JOBS=${JOBS:-16} BIN=${BIN:-$PWD/.gpu/bin}
export ATTN_ZOO="bloom_7b1_bf16 t5_wide_bf16 llama31_8b_bf16 t5_base_bf16"
SD=/tmp/posenc-sass
rm -rf "$SD"
(OUT=/tmp/posenc-gr BUDGET=300 STAGES="regs" SASS_DIR=$SD/default bash "$HERE/gpu_check.sh" . >/tmp/posenc-regs.txt 2>&1) &
(OUT=/tmp/posenc-gr64 BUDGET=300 STAGES="regs" POSENC_NVCC_FLAGS=-DPOSENC_ATTN_MMA_KEYS=64 bash "$HERE/gpu_check.sh" . >/tmp/posenc-regs64.txt 2>&1) &
(OUT=/tmp/posenc-grt BUDGET=300 STAGES="regs" POSENC_NVCC_FLAGS=-DPOSENC_ATTN_MMA_ROW_TILES=2 SASS_DIR=$SD/rowtiles2 bash "$HERE/gpu_check.sh" . >/tmp/posenc-regsrt.txt 2>&1) &
OUT=/tmp/posenc-g1 BUDGET=$((${TOTAL:-560} * 83 / 100)) VERIFY_TARGETS=cuda-ptx \
	VERIFY_ZOO="llama31_8b bloom_7b1 t5_base gemma3_4b_global phi35_mini qwen25_vl_7b" \
	ATTN_DTYPES=bf16 TORCH_ATTN_ARGS="--prefill 2048 8192 --graph" STAGES="facts verify attn" \
	bash "$HERE/gpu_check.sh" . >"$O/main.txt" 2>&1
echo "steps 1-2 done at $(($(date +%s) - T0)) s" >>"$O/main.txt"
# Steps 3 to 6 start together in what is left of TOTAL: their nvcc builds
# run side by side on the CPUs, and their timings one at a time, each bench
# -gpu process taking POSENC_GPU_LOCK between its builds and its first
# launch (ncu's too: the profile's bench holds it while ncu replays).
export POSENC_GPU_LOCK=/tmp/posenc-gpu.lock
L=$((${TOTAL:-560} - ($(date +%s) - T0) - 10))
if ((L < 150)); then
	echo "steps 3-6: skipped, $L s left" >>"$O/sweep.txt"
else
	# 3. ncu of llama31_8b_bf16's decode and tensor-core kernels
	# (gpu_check's profile stage; PROFILE=0: none).
	if [ "${PROFILE:-1}" != 0 ]; then
		# At most 200 s (ncu holds the lock while it replays): a build of a
		# minute or so, then some 40 s of profiling.
		OUT=/tmp/posenc-gp BUDGET=$((L < 200 ? L : 200)) ATTN_ZOO=llama31_8b_bf16 STAGES="facts profile" \
			bash "$HERE/gpu_check.sh" . >"$O/profile.txt" 2>&1 &
	fi
	# attn_build FLAGS SPECS DIR: gpu_check's attn stage (no torch rows) for
	# SPECS built with POSENC_NVCC_FLAGS=FLAGS, logs under DIR, its output
	# in DIR.txt.
	attn_build() {
		{
			echo "=== POSENC_NVCC_FLAGS=$1"
			POSENC_NVCC_FLAGS=$1 OUT=$3 BUDGET=$L ATTN_ZOO=$2 ATTN_DTYPES="" STAGES="attn" bash "$HERE/gpu_check.sh" . 2>&1
		} >"$3.txt" &
	}
	n=0
	for fl in ${SWEEP--DPOSENC_SWEEP_BASELINE -DPOSENC_ATTN_MMA_ROW_TILES=2 -DPOSENC_ATTN_MMA_ROW_TILES=2,-DPOSENC_ATTN_MMA_KEYS=64 -DPOSENC_ATTN_MMA_MIN_BLOCKS=3 -DPOSENC_ATTN_DECODE_LANE_TURN=0 -DPOSENC_ATTN_MMA_KEYS=64 -DPOSENC_ATTN_MMA_KEYS=64,-DPOSENC_ATTN_MMA_WARPS=8 -DPOSENC_ATTN_DECODE_WAVE_FIT=0 -DPOSENC_ATTN_TURN_ONCE_BYTES=0}; do
		n=$((n + 1))
		attn_build "${fl//,/ }" "llama31_8b_bf16 bloom_7b1_bf16" /tmp/posenc-s$n
	done
	attn_build -DPOSENC_ATTN_MMA=0 "bloom_7b1_bf16 t5_wide_bf16" /tmp/posenc-g2
	# 6. compute-sanitizer's memcheck, racecheck and synccheck on every
	# attention launcher of llama31_8b_bf16 and bloom_7b1_bf16
	# (posenc_shapes.cu's sanitize mode), each run under the lock.
	SHAPES_ZOO="llama31_8b_bf16 bloom_7b1_bf16" OUT=/tmp/posenc-gs BUDGET=$L STAGES="sanitize" \
		bash "$HERE/gpu_check.sh" . >"$O/sanitize.txt" 2>&1 &
	wait
	{
		for ((i = 1; i <= n; i++)); do cat /tmp/posenc-s$i.txt; done
		echo "=== step 5: the FMA kernel's prefill (-DPOSENC_ATTN_MMA=0)"
		cat /tmp/posenc-g2.txt
	} >>"$O/sweep.txt"
fi
wait
{
	echo "=== regs: as built"
	cat /tmp/posenc-regs.txt
	echo "=== regs: -DPOSENC_ATTN_MMA_KEYS=64"
	cat /tmp/posenc-regs64.txt
	echo "=== regs: -DPOSENC_ATTN_MMA_ROW_TILES=2"
	cat /tmp/posenc-regsrt.txt
} >"$O/regs.txt" 2>&1
[ -d "$SD" ] && (cd "$SD" && tar czf "$O/sass.tgz" .)
(cd /tmp && tar czf "$O/logs.tgz" posenc-g1/logs posenc-g2/logs posenc-gp/logs posenc-gs/logs posenc-gr/logs posenc-gr64/logs posenc-grt/logs posenc-s*/logs 2>/dev/null)
echo "total $(($(date +%s) - T0)) s"
cat "$O/main.txt" "$O/regs.txt" "$O/profile.txt" "$O/sweep.txt" "$O/sanitize.txt" 2>/dev/null | grep -v '^$' | tail -c 11000
