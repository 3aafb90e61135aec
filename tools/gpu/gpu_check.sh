#!/usr/bin/env bash
# gpu_check.sh: run posenc's CUDA kernels on an NVIDIA GPU and print the
# figures that matter, within BUDGET seconds (default 560).
#
#   bash tools/gpu/gpu_check.sh [POSENC_REPO]     # default: the current directory
#
# Needs: an NVIDIA GPU and driver; nvcc (CUDA >= 11.6, or set
# POSENC_NVCC_ARCH=sm_XY) and g++. Go is needed only where no prebuilt posenc
# is given: on a GPU machine without Go, build posenc elsewhere
#
#   CGO_ENABLED=0 go build -ldflags='-s -w' -o DIR/posenc ./cmd/posenc
#
# and run with BIN=DIR. Without Go on PATH, the script puts tools/gpu/go-shim
# on PATH as `go`: `posenc verify -gpu -targets cuda` and `posenc bench -gpu`
# use go only for `go env GOMOD` and for the CPU variants' `go test`, which
# the shim answers (no CPU rows). python3 with torch and transformers is used
# by the torch stage when present; compute-sanitizer when present.
#
# Environment: OUT (default: a new temporary folder), BUDGET, BIN, JOBS
# (parallel CPU jobs, default nproc), STAGES (default: all of
# "facts verify fastmath bench attn regs torch half shapes big sanitize"), VERIFY_ZOO, FASTMATH_ZOO and BENCH_ZOO
# (space-separated zoo names; default: the whole zoo, bench in the order
# below), ATTN_ZOO (zoo names or the f16/bf16 copies' names, e.g.
# llama31_8b_bf16), ATTN_DTYPES (torch_attn_bench.py's, default "f32 bf16"; empty: no torch rows),
# VERIFY_TARGETS (the verify stage's -targets, default cuda; cuda-ptx leaves
# out the host emulation, whose rows the CPU machines give),
# TORCH_ATTN_ARGS (more torch_attn_bench.py arguments, e.g. "--prefill 2048 8192"),
# SHAPES_ZOO (the half, shapes, big and sanitize stages' specs, from the
# list below; their harness builds take POSENC_NVCC_FLAGS too),
# TORCH_DTYPES (default "f32 bf16"), REPS (bench -gpu -reps, default 200), WORKAROUND=relaxed-constexpr
# (build everything with nvcc --expt-relaxed-constexpr through
# tools/gpu/nvcc-relaxed-constexpr: nvcc 13.0 rejects the generated RoPE
# kernels without it; see docs/gpu.md).
#
# Stages (each bounded by what is left of the budget; "facts" always runs):
#   facts    device and toolchain facts; whether nvcc -arch=native works
#   verify   posenc verify -gpu -targets cuda over the zoo and the f16/bf16
#            copies (storage-rounded bounds; t5_wide_bf16 is t5_base at 32
#            heads x 128, unidirectional), parallel processes
#   fastmath whether nvcc -use_fast_math defines __USE_FAST_MATH__, then
#            verify -gpu of RoPE, softmax, absolute and xl specs (f32, bf16)
#            with POSENC_NVCC_FLAGS=-use_fast_math
#   bench    posenc bench -gpu, one process per spec in turn: the f32 zoo
#            specs, then f16/bf16 copies of llama31_8b and bf16 ones of
#            gptj_6b, bloom_7b1 and t5_base
#   attn     posenc bench -gpu -attention (decode over 32768/131072 keys, causal
#            prefill 2048) for llama31_8b, bloom_7b1 and t5_base (f32, bf16),
#            then tools/gpu/torch_attn_bench.py: cuDNN SDPA and FlexAttention
#            ALiBi/T5 on the same shapes (f32, bf16)
#   regs     nvcc -Xptxas -v of the attention kernels of ATTN_ZOO's specs:
#            registers, spills and shared memory per kernel and form; with
#            SASS_DIR set, also cuobjdump -sass of those kernels, one
#            SASS_DIR/<spec>.sass.gz a spec (the instructions ptxas made,
#            to study where no GPU is)
#   torch    tools/gpu/torch_rope_bench.py (torch.compile of HF's RoPE), f32, bf16
#   half     tools/gpu/half_check.cu: f16/bf16 kernels vs the f32 kernels of
#            the same spec on the device, in 16-bit ulps (verify skips them)
#   shapes   tools/gpu/posenc_shapes.cu: RoPE decode/prefill/GQA, softmax
#            decode/prefill, hot and cold, against a D2D copy (SHAPES_MODE
#            bench-graph: timed as CUDA-graph replays)
#   big      launches over > 2^31 elements vs small launches, bit for bit
#   sanitize compute-sanitizer memcheck/racecheck/synccheck on small odd shapes
#            (the RoPE or softmax launchers, then every attention launcher),
#            each run under POSENC_GPU_LOCK's flock(1) when that is set
#   profile  (only when named in STAGES) Nsight Compute's ncu on the decode
#            and tensor-core attention kernels of one bench -gpu -attention
#            run of PROFILE_SPEC (default ATTN_ZOO's first): PROFILE_COUNT
#            launches (default 24), their time, registers, occupancy,
#            issue slots, throughputs and stall findings
set -u
START=$(date +%s)
BUDGET=${BUDGET:-560}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 8)}
OUT=${OUT:-$(mktemp -d)}
REPO=$(cd "${1:-${POSENC_REPO:-$PWD}}" && pwd) || exit 2
NVCC=${NVCC:-nvcc}
REPS=${REPS:-200}
ATTN_SPECS=${ATTN_ZOO:-llama31_8b llama31_8b_bf16 bloom_7b1 bloom_7b1_bf16 t5_base t5_base_bf16} # the attn and regs stages' specs
STAGES=" ${STAGES:-facts verify fastmath bench attn regs torch half shapes big sanitize} "
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) # go-shim, posenc_shapes.cu, torch_rope_bench.py

left() { echo $((BUDGET - ($(date +%s) - START))); }
# lim N: a timeout of at most N seconds that still leaves 15 s of the budget.
lim() {
	local w=$1 l
	l=$(($(left) - 15))
	((l < w)) && w=$l
	((w < 5)) && w=5
	echo "$w"
}
stage() { printf '\n=== [%4ds] %s\n' "$(($(date +%s) - START))" "$*"; }
want() { [[ $STAGES == *" $1 "* ]]; }
die() {
	echo "gpu_check: $*" >&2
	exit 2
}

[ -f "$REPO/cmd/posenc/main.go" ] || die "$REPO is not the posenc repository (no cmd/posenc/main.go)"
command -v nvidia-smi >/dev/null || die "nvidia-smi not found: no NVIDIA driver"
command -v "$NVCC" >/dev/null || die "nvcc not found (set NVCC=/path/to/nvcc)"
mkdir -p "$OUT"/{logs,bin,specs} || die "cannot create $OUT"
case ${WORKAROUND:-} in
"") ;;
relaxed-constexpr)
	NVCC_REAL=$(command -v "$NVCC") && export NVCC_REAL NVCC="$HERE/nvcc-relaxed-constexpr" || die "no nvcc"
	;;
*) die "WORKAROUND=$WORKAROUND: only relaxed-constexpr is known" ;;
esac
LOG=$OUT/logs
WORK=$(mktemp -d)

# posenc: BIN/posenc, else built here with go.
BIN=${BIN:-$REPO/.gpu/bin}
POSENC=$BIN/posenc
if [ ! -x "$POSENC" ]; then
	command -v go >/dev/null || die "no $POSENC and no go to build it (see the header of this script)"
	POSENC=$WORK/posenc
	(cd "$REPO" && CGO_ENABLED=0 go build -o "$POSENC" ./cmd/posenc) || die "go build ./cmd/posenc failed"
fi
# go: the real one, else the shim (go env GOMOD and go test only).
if ! command -v go >/dev/null; then
	mkdir -p "$WORK/gobin" && cp "$HERE/go-shim" "$WORK/gobin/go" && chmod +x "$WORK/gobin/go" || die "cannot install the go shim"
	export PATH=$WORK/gobin:$PATH POSENC_GOMOD=$REPO/go.mod
	GOSHIM=1
fi

stage "facts: device and toolchain"
date -u '+%Y-%m-%d %H:%M:%S UTC'
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,compute_cap,power.limit,persistence_mode \
	--format=csv 2>/dev/null || nvidia-smi -L
nvidia-smi 2>/dev/null | sed -n '3p'
"$NVCC" --version | tail -2
[ -n "${WORKAROUND:-}" ] && echo "WORKAROUND=$WORKAROUND: every nvcc build (posenc's drivers, the harness) gets --expt-relaxed-constexpr"
g++ --version | head -1
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)' 2>/dev/null ||
	echo "python3 with torch and transformers: not found"
echo "go: $(if [ -n "${GOSHIM:-}" ]; then echo "none: tools/gpu/go-shim stands in (no CPU rows)"; else go version; fi)"
echo "posenc: $POSENC"
command -v clang >/dev/null || echo "clang: not found (verify's cuda-ptx rows will say so)"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
ARCH=${POSENC_NVCC_ARCH:-sm_${cc:-90}}
# Does the documented default (-arch=native) work here? posenc uses it
# unless POSENC_NVCC_ARCH is set.
cat >"$WORK/t.cu" <<'EOF'
#include <cstdio>
__global__ void k(int *p) { *p = 42; }
int main() { int *d, h = 0; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost); std::printf("%d\n", h); return h != 42; }
EOF
if "$NVCC" -arch=native -o "$WORK/t" "$WORK/t.cu" >"$LOG/native.txt" 2>&1 && "$WORK/t" >>"$LOG/native.txt" 2>&1; then
	echo "nvcc -arch=native: builds and runs"
else
	echo "nvcc -arch=native: FAILED (posenc gets POSENC_NVCC_ARCH=$ARCH):"
	tail -5 "$LOG/native.txt"
	export POSENC_NVCC_ARCH=$ARCH
fi
echo "harness builds: nvcc -arch=$ARCH; budget ${BUDGET}s; $JOBS jobs; stages:$STAGES; output under $OUT"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>/dev/null

cd "$REPO" || die "cd $REPO"

# f16/bf16 copies of zoo specs, named <zoo>_<dtype>.
for zd in llama31_8b:f16 llama31_8b:bf16 gptj_6b:bf16 bloom_7b1:bf16 t5_base:bf16; do
	z=${zd%%:*} dt=${zd##*:}
	sed "s/^name: $z\$/name: ${z}_$dt/" "spec/zoo/$z.yaml" >"$OUT/specs/${z}_$dt.yaml"
	printf '\ndtype: %s\n' "$dt" >>"$OUT/specs/${z}_$dt.yaml"
done
# T5 buckets at the attention issue's shape (32 heads x 128, unidirectional:
# torch_attn_bench.py's FlexAttention T5 score_mod), bf16.
sed -e 's/^name: t5_base$/name: t5_wide_bf16/' -e 's/^heads: 12$/heads: 32/' -e 's/^head_dim: 64$/head_dim: 128/' \
	-e 's/^  bidirectional: true$/  bidirectional: false/' \
	spec/zoo/t5_base.yaml >"$OUT/specs/t5_wide_bf16.yaml"
printf '\ndtype: bf16\n' >>"$OUT/specs/t5_wide_bf16.yaml"

# Harness specs: name -> kind (1 rope, 2 alibi, 3 rpe_bias) and extra flags.
declare -A KIND=([llama31_8b]=1 [llama31_8b_f16]=1 [llama31_8b_bf16]=1 [gptj_6b]=1 [gptj_6b_bf16]=1 [phi35_mini]=1
	[bloom_7b1]=2 [bloom_7b1_bf16]=2 [t5_base]=3 [t5_base_bf16]=3)
declare -A EXTRA=([phi35_mini]=-DPMAXPOS)
HARNESS_SPECS=${SHAPES_ZOO:-llama31_8b llama31_8b_bf16 llama31_8b_f16 gptj_6b gptj_6b_bf16 phi35_mini bloom_7b1 bloom_7b1_bf16 t5_base t5_base_bf16}
BG=
if want half || want shapes || want big || want sanitize; then
	GEN=$WORK/gen
	"$POSENC" gen -o "$GEN" -zoo llama31_8b -zoo gptj_6b -zoo phi35_mini -zoo bloom_7b1 -zoo t5_base "$OUT"/specs/*.yaml >"$LOG/gen.txt" 2>&1 ||
		{ cat "$LOG/gen.txt"; die "posenc gen failed"; }
	hb() { # one harness binary
		local n=$1 d=$GEN/$1 dt=f32
		case $n in *_bf16) dt=bf16 ;; *_f16) dt=f16 ;; esac
		"$NVCC" -O3 -std=c++17 -arch="$ARCH" -Xptxas -v -DPSPEC="$n" -DPKIND="${KIND[$n]}" -DPDTYPE="$dt" ${EXTRA[$n]:-} ${POSENC_NVCC_FLAGS:-} \
			-DPCU="\"$d/$n.cu\"" -o "$OUT/bin/$n" "$HERE/posenc_shapes.cu" >"$LOG/build_$n.txt" 2>&1 ||
			echo "harness build of $n failed: see $LOG/build_$n.txt"
	}
	want shapes || want big || want sanitize || HARNESS_SPECS=
	(
		for n in $HARNESS_SPECS; do
			while (($(jobs -rp | wc -l) >= (JOBS + 1) / 2)); do sleep 0.2; done
			hb "$n" &
		done
		wait
	) >"$LOG/background.txt" 2>&1 &
	BG=$!
fi

if want verify; then
	# The zoo specs and the f16/bf16 copies (storage-rounded bounds; their
	# cuda-gpu rows check every launcher, the RoPE engine forms and the
	# tensor-core attention kernel included) in one pool of processes.
	VZ=${VERIFY_ZOO:-$(ls spec/zoo/*.yaml | xargs -n1 basename | sed 's/\.yaml$//' | tr '\n' ' ')}
	VS="$VZ $(ls "$OUT"/specs/*.yaml | tr '\n' ' ')"
	VJ=$((JOBS / 2 > 1 ? JOBS / 2 : 1))
	stage "verify: posenc verify -gpu -targets ${VERIFY_TARGETS:-cuda}, $(echo $VZ | wc -w) zoo specs and $(ls "$OUT"/specs/*.yaml | wc -l) f16/bf16 copies, $VJ processes"
	VT=$(lim 300)
	: >"$LOG/verify_rc.txt"
	# {} is a zoo name or a copy's file; its log is named by the spec.
	echo $VS | tr ' ' '\n' | timeout "$(lim 320)" xargs -P "$VJ" -I{} sh -c \
		'n=$(basename "$2" .yaml); case $2 in *.yaml) a=$2 ;; *) a="-zoo $2" ;; esac
		timeout '"$VT"' "$0" verify -gpu -targets '"${VERIFY_TARGETS:-cuda}"' $a >"$1/verify_$n.txt" 2>&1; echo "$? $n" >>"$1/verify_rc.txt"' \
		"$POSENC" "$LOG" {}
	printf '%-20s %-18s %6s %14s  %-44s %s\n' SPEC TARGET CASES "MAX ERR/BOUND" "WORST CASE" RESULT
	grep -hE '^[a-z0-9_]+ +cuda-(gpu|gpu-emulated|host|ptx) ' "$LOG"/verify_*.txt | sort
	grep -h 'device ' "$LOG"/verify_*.txt | grep cuda-gpu | head -1
	n=$(wc -l <"$LOG/verify_rc.txt")
	gpass=$(cat "$LOG"/verify_*.txt | grep -cE '^[a-z0-9_]+ +cuda-gpu(-emulated)? .* ok$')
	gfail=$(cat "$LOG"/verify_*.txt | grep -E '^[a-z0-9_]+ +cuda-gpu(-emulated)? ' | grep -vc ' ok$')
	echo "verify: $n of $(echo $VS | wc -w) specs finished; cuda-gpu rows: $gpass ok, $gfail failed"
	for z in $VS; do
		z=$(basename "$z" .yaml)
		grep -q " $z\$" "$LOG/verify_rc.txt" || echo "--- $z: did not finish (budget)"
		f=$LOG/verify_$z.txt
		# failure lines: the row, the progress lines about cuda-gpu other
		# than the one naming the device, panics
		bad=$(grep -E "^$z +cuda-gpu .*FAIL|cuda-gpu: |panic|cudaError" "$f" 2>/dev/null | grep -v 'cuda-gpu: device ' | head -12)
		[ -n "$bad" ] && printf -- '--- %s (cuda-gpu failure lines of %s)\n%s\n' "$z" "$f" "$bad"
	done
fi

if want fastmath; then
	# -use_fast_math (ggml's flag): sincosf/expf become intrinsics and
	# denormals are flushed. The kernels must keep their bounds anyway.
	stage "fastmath: nvcc -use_fast_math builds, verify -gpu"
	echo '__USE_FAST_MATH__' >"$WORK/fm.cu"
	"$NVCC" -use_fast_math -E -x cu "$WORK/fm.cu" 2>/dev/null | grep -q '^1$' &&
		echo "nvcc -use_fast_math defines __USE_FAST_MATH__ (=1)" || echo "nvcc -use_fast_math: __USE_FAST_MATH__ NOT defined"
	FZ=${FASTMATH_ZOO:-llama31_8b gptj_6b qwen25_7b_yarn phi35_mini bloom_7b1 t5_base transformer_base transformer_xl_base}
	FA=()
	for z in $FZ; do FA+=(-zoo "$z"); done
	POSENC_NVCC_FLAGS="-use_fast_math ${POSENC_NVCC_FLAGS:-}" timeout "$(lim 240)" "$POSENC" verify -gpu -targets cuda "${FA[@]}" \
		"$OUT"/specs/llama31_8b_bf16.yaml "$OUT"/specs/bloom_7b1_bf16.yaml >"$LOG/verify_fastmath.txt" 2>&1
	echo "exit status $?"
	grep -hE '^[a-z0-9_]+ +cuda-gpu ' "$LOG/verify_fastmath.txt" | sort
	grep -hE 'cuda-gpu: ' "$LOG/verify_fastmath.txt" | grep -v 'device ' | head -10
fi

if [ -n "$BG" ]; then
	stage "waiting for the harness builds"
	while kill -0 "$BG" 2>/dev/null && (($(left) > 120)); do sleep 1; done
	kill -0 "$BG" 2>/dev/null && echo "harness builds still running; going on with what is built"
	cat "$LOG/background.txt"
	grep -h -A1 'Compiling entry function' "$LOG"/build_*.txt 2>/dev/null | grep -E 'registers|spill' | sort | uniq -c | sort -rn | head -8
	grep -hE '[1-9][0-9]* bytes (spill|stack)' "$LOG"/build_*.txt 2>/dev/null | sort | uniq -c | head
fi

if want bench; then
	BZ=${BENCH_ZOO:-llama31_8b gptj_6b phi35_mini qwen25_7b_yarn bloom_7b1 t5_base transformer_base bert_base llama2_7b pythia_1b falcon_7b mistral_7b gpt_oss_20b llama32_1b mixtral_8x7b mpt_7b bloom_176b}
	stage "bench: posenc bench -gpu -reps $REPS, one process per spec (RoPE 16/4096 tokens x 32 heads, softmax [heads][512][512], add 16/4096 tokens)"
	: >"$LOG/bench_rows.txt"
	hdr_done=0
	for z in $BZ "$OUT/specs/llama31_8b_bf16.yaml" "$OUT/specs/llama31_8b_f16.yaml" "$OUT/specs/gptj_6b_bf16.yaml" \
		"$OUT/specs/bloom_7b1_bf16.yaml" "$OUT/specs/t5_base_bf16.yaml"; do
		(($(left) > 40)) || { echo "bench $z: skipped, budget"; continue; }
		case $z in *.yaml) a=$z n=$(basename "$z" .yaml) ;; *) a="-zoo $z" n=$z ;; esac
		# shellcheck disable=SC2086
		timeout "$(lim 90)" "$POSENC" bench -gpu -reps "$REPS" $a >"$LOG/bench_$n.txt" 2>"$LOG/bench_$n.err"
		rc=$?
		if ((hdr_done == 0)) && [ $rc = 0 ]; then
			grep -m1 '^posenc bench -gpu:' "$LOG/bench_$n.txt"
			grep -m1 '^SPEC ' "$LOG/bench_$n.txt"
			hdr_done=1
		fi
		grep -vE '^(posenc|SPEC |GB/s)' "$LOG/bench_$n.txt" | tee -a "$LOG/bench_rows.txt"
		grep -h '^posenc: RoPE' "$LOG/bench_$n.txt" | sed "s/^/  $n: /"
		((rc == 0)) || { echo "  bench $n: exit $rc (124 = timed out):"; tail -5 "$LOG/bench_$n.err"; }
	done
fi

if want attn; then
	stage "attn: posenc bench -gpu -attention (decode K+V GB/s, causal prefill TFLOP/s), then torch's SDPA and FlexAttention"
	# One process: it builds every spec's driver at once (a core each), then
	# times them one at a time; each row is on stderr as it comes, so a run
	# stopped by the budget still shows what it measured. The torch rows
	# keep 150 s of the budget when ATTN_DTYPES names any.
	aa=()
	for z in $ATTN_SPECS; do
		if [ -f "$OUT/specs/$z.yaml" ]; then aa+=("$OUT/specs/$z.yaml"); else aa+=(-zoo "$z"); fi
	done
	keep=0
	[ -n "${ATTN_DTYPES-f32 bf16}" ] && keep=150
	timeout "$(lim $(($(left) - keep)))" "$POSENC" bench -gpu -attention -reps 50 "${aa[@]}" >"$LOG/attn.txt" 2>"$LOG/attn.err"
	rc=$?
	if ((rc == 0)); then
		grep -vE '^(posenc|GB/s|attention:)' "$LOG/attn.txt"
	else
		echo "  attn: exit $rc (124 = timed out); the rows it measured:"
		grep -E ' × copy' "$LOG/attn.err"
		grep -vE ' × copy' "$LOG/attn.err" | tail -5
	fi
	for dt in ${ATTN_DTYPES-f32 bf16}; do
		(($(left) > 60)) || { echo "torch attn $dt: skipped, budget"; continue; }
		# shellcheck disable=SC2086
		PYTHONUNBUFFERED=1 timeout "$(lim 150)" python3 "$HERE/torch_attn_bench.py" --dtype "$dt" ${TORCH_ATTN_ARGS:-} >"$LOG/torch_attn_$dt.txt" 2>&1
		rc=$?
		grep -v 'Warning\|warn(' "$LOG/torch_attn_$dt.txt" | tail -12
		((rc == 0)) || echo "  torch attn $dt: exit $rc"
	done
fi

if want regs; then
	stage "regs: nvcc -Xptxas -v of the attention kernels (registers, spills, shared memory)"
	RG=$WORK/regs
	ra=()
	for z in $ATTN_SPECS; do
		if [ -f "$OUT/specs/$z.yaml" ]; then ra+=("$OUT/specs/$z.yaml"); else ra+=(-zoo "$z"); fi
	done
	if "$POSENC" gen -o "$RG" "${ra[@]}" >"$LOG/regs_gen.txt" 2>&1; then
		for d in "$RG"/*/; do
			n=$(basename "$d")
			(($(left) > 30)) || { echo "regs $n: skipped, budget"; continue; }
			timeout "$(lim 60)" "$NVCC" -O3 -std=c++17 -arch="$ARCH" -Xptxas -v ${POSENC_NVCC_FLAGS:-} -c -o "$RG/$n.o" "$d/$n.cu" >"$LOG/regs_$n.txt" 2>&1
			if [ -n "${SASS_DIR:-}" ] && [ -f "$RG/$n.o" ]; then
				# The attention kernels' SASS ("Function : <mangled>" starts
				# each kernel's listing).
				mkdir -p "$SASS_DIR"
				cuobj=$(dirname "$(command -v "${NVCC_REAL:-$NVCC}")")/cuobjdump
				[ -x "$cuobj" ] || cuobj=$(command -v cuobjdump || echo cuobjdump)
				"$cuobj" -sass "$RG/$n.o" 2>>"$LOG/regs_$n.txt" |
					awk '/Function : / { on = ($0 ~ /_attention_/) } on' | gzip -c >"$SASS_DIR/$n.sass.gz"
			fi
			# "Compiling entry function '<mangled>'" then its stack/spill and
			# registers lines: the kernel's short name (its form, and the
			# decode kernel's rows, in <>).
			awk -v n="$n" '/Compiling entry function/ { k = $0; sub(/.*posenc_[A-Za-z0-9_]*_attention_/, "", k); sub(/EEv.*/, ">", k); sub(/ILi/, "<", k); gsub(/ELi/, ",", k); on = ($0 ~ /_attention_/) }
				on && /spill/ { sp = $0; sub(/^[ \t]*/, "", sp) }
				on && /registers/ { r = $0; sub(/.*Used /, "", r); printf "%-18s %-26s %s; %s\n", n, k, r, sp; on = 0 }' "$LOG/regs_$n.txt"
		done
	else
		echo "regs: posenc gen failed: see $LOG/regs_gen.txt"
	fi
fi

if want profile; then
	# One bench -gpu -attention -reps 1 run of PROFILE_SPEC under Nsight
	# Compute: each case launches its kernel twice (warm-up, timed), and
	# ncu profiles the first PROFILE_COUNT launches of the decode and
	# tensor-core kernels (a rope spec's 12 cases: decode 32/32, 32/8 at two
	# lengths, 64/8, rotated then rope inside; prefill 2048 and 8192), the
	# driver being bench's child process. The lines kept say where the
	# kernel's time goes: duration, registers, occupancy, issue-slot use,
	# throughputs, bank conflicts and ncu's stall findings; clocks as the
	# device runs them (--clock-control none), as bench's timings.
	PSPEC=${PROFILE_SPEC:-${ATTN_SPECS%% *}}
	stage "profile: ncu of the attention kernels in bench -gpu -attention -reps 1 of $PSPEC"
	NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
	if [ -z "$NCU" ]; then
		echo "ncu: not found"
	else
		"$NCU" --version | tail -1
		if [ -f "$OUT/specs/$PSPEC.yaml" ]; then pa=("$OUT/specs/$PSPEC.yaml"); else pa=(-zoo "$PSPEC"); fi
		timeout "$(lim $(($(left) - 5)))" "$NCU" --target-processes all --kernel-name-base demangled \
			--kernel-name "regex:attention_(decode|mma)_kernel" --launch-count "${PROFILE_COUNT:-24}" \
			--clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy \
			--section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis \
			--section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
			"$POSENC" bench -gpu -attention -reps 1 "${pa[@]}" >"$LOG/profile.txt" 2>"$LOG/profile.err"
		echo "ncu: exit $? (124 = timed out; full report in logs/profile.txt)"
		grep -E 'attention_(decode|mma)_kernel|Duration|Registers Per Thread|Occupancy|Issue Slots Busy|No Eligible|Throughput|Bank|stall|ERR|==PROF==' \
			"$LOG/profile.txt" "$LOG/profile.err" | grep -v 'Disconnected' | cut -c1-170 | head -400
	fi
fi

if want torch; then
	stage "torch: torch.compile of HF apply_rotary_pos_emb, q and k of tokens x 32 heads x 128"
	for dt in ${TORCH_DTYPES:-f32 bf16}; do
		(($(left) > 60)) || { echo "torch $dt: skipped, budget"; continue; }
		PYTHONUNBUFFERED=1 timeout "$(lim 120)" python3 "$HERE/torch_rope_bench.py" --tokens 16 4096 --dtype "$dt" --reps "$REPS" \
			>"$LOG/torch_$dt.txt" 2>&1
		rc=$?
		grep -v 'Warning\|warn(' "$LOG/torch_$dt.txt" | tail -8
		((rc == 0)) || echo "  torch $dt: exit $rc"
	done
fi

if want half; then
	stage "half: f16/bf16 kernels vs the f32 kernels of the same spec, same 16-bit inputs (error in ulps of the 16-bit type)"
	hc() { # f32 spec, 16-bit spec, kind, storage type, DIM
		"$NVCC" -O3 -std=c++17 -arch="$ARCH" -DF="$1" -DH="$2" -DKIND="$3" -DHT="$4" -DDIM="$5" -I"$GEN/$1" -I"$GEN/$2" \
			-o "$OUT/bin/half_$2" "$HERE/half_check.cu" "$GEN/$1/$1.cu" "$GEN/$2/$2.cu" >"$LOG/build_half_$2.txt" 2>&1 ||
			echo "half_check build of $2 failed: $(head -5 "$LOG/build_half_$2.txt")"
	}
	hc llama31_8b llama31_8b_bf16 1 __nv_bfloat16 128 &
	hc llama31_8b llama31_8b_f16 1 __half 128 &
	hc gptj_6b gptj_6b_bf16 1 __nv_bfloat16 256 &
	hc bloom_7b1 bloom_7b1_bf16 2 __nv_bfloat16 32 &
	wait
	for n in llama31_8b_bf16 llama31_8b_f16 gptj_6b_bf16 bloom_7b1_bf16; do
		[ -x "$OUT/bin/half_$n" ] || continue
		(($(left) > 30)) || { echo "half $n: skipped, budget"; continue; }
		timeout "$(lim 60)" "$OUT/bin/half_$n" 2>&1 | tee "$LOG/half_$n.txt"
	done
fi

if want shapes; then
	stage "shapes: GB/s counts 2 x tensor bytes (read+write); xcopy = copy time / kernel time; cold = rotating buffers (3x L2)"
	: >"$LOG/shapes.txt"
	hdr=0
	for n in $HARNESS_SPECS; do
		[ -x "$OUT/bin/$n" ] || { echo "$n: no harness binary (see $LOG/build_$n.txt)"; continue; }
		(($(left) > 60)) || { echo "$n: skipped, budget"; continue; }
		timeout "$(lim 60)" "$OUT/bin/$n" "${SHAPES_MODE:-bench}" >"$LOG/shapes_$n.txt" 2>&1
		rc=$?
		if ((hdr == 0)); then grep -m1 '^spec ' "$LOG/shapes_$n.txt"; hdr=1; fi
		grep -vE '^(spec |# )' "$LOG/shapes_$n.txt" | tee -a "$LOG/shapes.txt"
		((rc == 0)) || echo "  $n: exit $rc (124 = timed out)"
	done
fi

if want big; then
	stage "big: index math beyond 2^31 elements (rows of one launch vs small launches, bit for bit)"
	for n in llama31_8b llama31_8b_bf16 gptj_6b_bf16 bloom_7b1 t5_base_bf16; do
		[ -x "$OUT/bin/$n" ] || continue
		(($(left) > 45)) || { echo "$n: skipped, budget"; continue; }
		timeout "$(lim 40)" "$OUT/bin/$n" big 2>&1 | tee "$LOG/big_$n.txt"
	done
fi

if want sanitize; then
	if command -v compute-sanitizer >/dev/null; then
		stage "sanitize: compute-sanitizer on small odd shapes (aligned and misaligned pointers)"
		for n in llama31_8b_bf16 gptj_6b phi35_mini bloom_7b1 t5_base_bf16; do
			[ -x "$OUT/bin/$n" ] || continue
			for tool in memcheck racecheck synccheck; do
				(($(left) > 30)) || { echo "$n $tool: skipped, budget"; continue; }
				# Under POSENC_GPU_LOCK (flock(1)) when set: other processes
				# time kernels on the GPU meanwhile (attn_call.sh).
				lk=()
				[ -n "${POSENC_GPU_LOCK:-}" ] && command -v flock >/dev/null && lk=(flock "$POSENC_GPU_LOCK")
				timeout "$(lim $(($(left) - 5)))" ${lk[@]+"${lk[@]}"} timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 9 \
					--print-limit 10 "$OUT/bin/$n" sanitize >"$LOG/sanitize_${n}_$tool.txt" 2>&1
				rc=$?
				printf '%-18s %-10s %s\n' "$n" "$tool" "$( ((rc == 0)) && echo ok || echo "FAILED (exit $rc)")"
				((rc == 0)) || grep -m5 -E 'Error|error|Hazard|Invalid|Barrier' "$LOG/sanitize_${n}_$tool.txt"
			done
		done
	else
		stage "sanitize: skipped (compute-sanitizer not on PATH)"
	fi
fi

stage "summary"
grep -h '^posenc: RoPE' "$LOG"/bench_*.txt 2>/dev/null | sort | uniq -c
grep -h '^big: .*: \(ok\|FAILED\)$' "$LOG"/big_*.txt 2>/dev/null
grep -h '^half_check ' "$LOG"/half_*.txt 2>/dev/null
grep -h 'MISMATCH\|ERROR' "$LOG"/big_*.txt "$LOG"/shapes_*.txt 2>/dev/null | head
rm -rf "$WORK"
echo "logs: $LOG; total $(($(date +%s) - START)) s"
