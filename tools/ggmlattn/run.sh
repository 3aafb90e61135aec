#!/usr/bin/env bash
# run.sh builds ggml's CPU backend and ggml_attn_bench.c in a temporary
# directory (no cmake: gcc/g++ with the flags and defines ggml's CMake sets for
# a native CPU build) and times, in one run and one thread each:
#   1. ggml flash_attn_ext (ggml_attn_bench: f16 and f32 K/V, ALiBi mask),
#   2. posenc's attention on the same shapes (go run ./tools/ggmlattn/posencattn),
#   3. posenc's own benchmarks (go test -bench BenchmarkAttention, bloom_7b1
#      and llama2_7b; their shapes: decode over 4096 keys, prefill of 512).
#
# usage (from anywhere in the posenc repository):
#   tools/ggmlattn/run.sh [GGML]
# GGML (or $GGML_DIR) is a git directory of ggml-org/ggml (a bare one, as the
# mirror's .../repo, or a checkout's .git) or an unpacked source tree.
# Environment:
#   GGML_REV     commit to build from a git directory (default d99724f2, else HEAD)
#   REPEAT       times the timed part runs (default 2)
#   ROUNDS       decode rounds (default 7), PROUNDS prefill rounds (default 5)
#   BENCHTIME    -benchtime of the go test benchmarks (default 20x)
#   JOBS         parallel compiles (default 2)
#   WORK         build directory (default a new mktemp -d, removed at exit
#                unless KEEP=1)
#   LOG          where the timed part's output goes too (default $WORK/run.log,
#                removed with WORK unless KEEP=1); awk -f
#                tools/ggmlattn/summary.awk LOG1 LOG2... pools several runs
#   SKIP_TOKMAJOR=1 skips ggml's token-major (llama.cpp cache layout) decode rows
# About 2 minutes a repetition on a 2-core Xeon, 5 for a default run with
# the build (about 1 minute at JOBS=2).
set -euo pipefail

GGML=${1:-${GGML_DIR:-}}
if [ -z "$GGML" ]; then
    echo "usage: $0 GGML_GIT_DIR_OR_SOURCE (or set GGML_DIR)" >&2
    exit 2
fi
GGML=$(cd "$GGML" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPEAT=${REPEAT:-2}
ROUNDS=${ROUNDS:-7}
PROUNDS=${PROUNDS:-5}
BENCHTIME=${BENCHTIME:-20x}
JOBS=${JOBS:-2}
if [ -z "${WORK:-}" ]; then
    WORK=$(mktemp -d /tmp/ggmlattn.XXXXXX)
    [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"

# --- ggml sources ---------------------------------------------------------
if [ -f "$GGML/src/ggml.c" ]; then
    SRC=$GGML
    COMMIT=$(git -C "$GGML" rev-parse --short=8 HEAD 2>/dev/null || echo unknown)
else
    REV=${GGML_REV:-d99724f2}
    if ! git --git-dir="$GGML" cat-file -e "$REV^{commit}" 2>/dev/null; then
        echo "ggml commit $REV not in $GGML; using HEAD" >&2
        REV=HEAD
    fi
    COMMIT=$(git --git-dir="$GGML" rev-parse --short=8 "$REV")
    SRC=$WORK/ggml
    rm -rf "$SRC" && mkdir -p "$SRC"
    git --git-dir="$GGML" archive "$COMMIT" include src CMakeLists.txt | tar -x -C "$SRC"
fi
VERSION=$(sed -n 's/^set(GGML_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\))/\2/p' "$SRC/CMakeLists.txt" | paste -sd.)
echo "ggml $VERSION, commit $COMMIT, sources $SRC; build in $WORK"

# --- build ----------------------------------------------------------------
# ggml's CMake, Linux, Release, GGML_NATIVE=ON (x86: just -march=native, no
# GGML_AVX* defines), GGML_OPENMP=ON, GGML_LLAMAFILE=OFF (ggml's default),
# static libraries: ggml-base + ggml (backend registry) + ggml-cpu.
CFLAGS="-O3 -DNDEBUG -march=native -fopenmp"
DEFS="-D_GNU_SOURCE -D_XOPEN_SOURCE=600 -DGGML_SCHED_MAX_COPIES=4 -DGGML_USE_CPU -DGGML_USE_OPENMP"
INC="-I$SRC/include -I$SRC/src -I$SRC/src/ggml-cpu"
cat > "$WORK/cc.sh" <<EOF
#!/bin/sh
# \$1: a source path under src/
f=\$1; o="$WORK/obj/\$(echo "\$f" | tr / _).o"
case "\$f" in
  *.c) exec gcc -std=gnu11 $CFLAGS $DEFS -DGGML_VERSION='"$VERSION"' -DGGML_COMMIT='"$COMMIT"' $INC -c "$SRC/src/\$f" -o "\$o" ;;
  *)   exec g++ -std=gnu++17 $CFLAGS $DEFS -DGGML_VERSION='"$VERSION"' -DGGML_COMMIT='"$COMMIT"' $INC -c "$SRC/src/\$f" -o "\$o" ;;
esac
EOF
chmod +x "$WORK/cc.sh"
mkdir -p "$WORK/obj"
SOURCES="ggml.c ggml.cpp ggml-alloc.c ggml-backend.cpp ggml-backend-meta.cpp ggml-opt.cpp
ggml-threading.cpp ggml-quants.c gguf.cpp ggml-backend-reg.cpp ggml-backend-dl.cpp
ggml-cpu/ggml-cpu.c ggml-cpu/ggml-cpu.cpp ggml-cpu/repack.cpp ggml-cpu/hbm.cpp ggml-cpu/quants.c
ggml-cpu/traits.cpp ggml-cpu/amx/amx.cpp ggml-cpu/amx/mmq.cpp ggml-cpu/binary-ops.cpp
ggml-cpu/unary-ops.cpp ggml-cpu/vec.cpp ggml-cpu/ops.cpp ggml-cpu/arch/x86/quants.c
ggml-cpu/arch/x86/repack.cpp"
for f in $SOURCES; do [ -f "$SRC/src/$f" ] || { echo "missing $SRC/src/$f (another ggml layout?)" >&2; exit 1; }; done
echo "compiling ggml ($JOBS jobs): $CFLAGS $DEFS"
printf '%s\n' $SOURCES | xargs -P "$JOBS" -n 1 "$WORK/cc.sh"
rm -f "$WORK/libggml.a"
ar rcs "$WORK/libggml.a" "$WORK"/obj/*.o
gcc -std=gnu11 -O2 -march=native -Wall -Wextra -I"$SRC/include" \
    "$ROOT/tools/ggmlattn/ggml_attn_bench.c" "$WORK/libggml.a" \
    -o "$WORK/ggml_attn_bench" -fopenmp -lstdc++ -lm -ldl -lpthread
(cd "$ROOT" && go build -o "$WORK/posencattn" ./tools/ggmlattn/posencattn)

# --- timed part -----------------------------------------------------------
LOG=${LOG:-$WORK/run.log}
timed() {
    grep -m1 'model name' /proc/cpuinfo || true
    echo "cores: $(nproc)"
    for i in $(seq "$REPEAT"); do
        # the load average counts this script's own process too
        echo "=== repetition $i of $REPEAT ($(date -u +%H:%M:%SZ), load $(cut -d' ' -f1-3 /proc/loadavg))"
        OMP_NUM_THREADS=1 "$WORK/ggml_attn_bench" -r "$ROUNDS" -rp "$PROUNDS"
        if [ "${SKIP_TOKMAJOR:-0}" != 1 ]; then
            OMP_NUM_THREADS=1 "$WORK/ggml_attn_bench" -decode -tokmajor -r "$ROUNDS"
        fi
        "$WORK/posencattn" -r "$ROUNDS" -rp "$PROUNDS"
        (cd "$ROOT" && go test -run '^$' -bench 'BenchmarkAttention/avx' -benchtime "$BENCHTIME" \
            ./generated/bloom_7b1/ ./generated/llama2_7b/ | grep -E '^(Benchmark|ok|FAIL)')
    done
}
timed | tee "$LOG"
echo
echo "=== summary over $REPEAT repetition(s): median (lowest-highest) of the repetitions' medians"
awk -f "$ROOT/tools/ggmlattn/summary.awk" "$LOG"
