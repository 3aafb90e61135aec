# summary.awk condenses run.sh's log: for every row (a shape, a K/V type, a
# form or layout and a variant), the median over the repetitions of each
# repetition's figure (itself a median over rounds), with the lowest and the
# highest in parentheses. Decode rows: kernel ms, K+V GB/s, x-copy (ggml:
# ÷ memcpy, posenc: ÷ copy()); prefill rows: GFLOP/s; go test rows: the
# benchmark's own metric (MB/s shown as GB/s).
#
#   awk -f tools/ggmlattn/summary.awk run.log
function med(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    lo = a[1]; hi = a[n]
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function fmt(s,   m) {
    if (s == "") return "-"
    m = med(s)
    return sprintf("%.2f (%.2f-%.2f)", m, lo, hi)
}
function add(key, v1, v2, v3) {
    if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
    s1[key] = s1[key] " " v1
    if (v2 != "") s2[key] = s2[key] " " v2
    if (v3 != "") s3[key] = s3[key] " " v3
}
/^posenc attention/ { src = "posenc" }
/^ggml .*flash_attn_ext/ { src = "ggml" }
/^decode / {
    key = $0; sub(/ *K\+V=.*/, "", key); gsub(/  +/, " ", key); sub(/^decode /, "", key)
    ms = gb = xc = ""
    for (i = 2; i <= NF; i++) {
        if ($(i) == "ms") ms = $(i - 1)
        if ($(i) == "GB/s" && gb == "") gb = $(i - 1)
        if ($(i) == "x-copy") xc = $(i + 1)
    }
    add("decode " src " " key, ms, gb, xc)
}
/^prefill / {
    key = $0; sub(/ +[0-9.]+ ms .*/, "", key); gsub(/  +/, " ", key); sub(/^prefill /, "", key)
    for (i = 1; i <= NF; i++) if ($(i) == "GFLOP/s") g = $(i - 1)
    add("prefill " src " " key, g, "", "")
}
/^Benchmark/ { m = $(NF - 1); u = $NF; if (u == "MB/s") { m = m / 1000; u = "GB/s" } pend[++np] = $1 " (" u ")"; pv[np] = m }
/^ok / {
    pkg = $2; sub(/.*\//, "", pkg)
    for (i = 1; i <= np; i++) add("go test " pkg " " pend[i], pv[i], "", "")
    np = 0
}
END {
    printf "\n%-46s %-22s %-22s %s\n", "decode", "kernel ms", "K+V GB/s", "x-copy (ggml: memcpy, posenc: copy())"
    for (k = 1; k <= nk; k++) if ((key = order[k]) ~ /^decode/)
        printf "%-46s %-22s %-22s %s\n", substr(key, 8), fmt(s1[key]), fmt(s2[key]), fmt(s3[key])
    printf "\n%-46s %s\n", "prefill", "GFLOP/s"
    for (k = 1; k <= nk; k++) if ((key = order[k]) ~ /^prefill/)
        printf "%-46s %s\n", substr(key, 9), fmt(s1[key])
    printf "\n%s\n", "go test -bench: posenc's own shapes (decode over 4096 keys, prefill of 512; bloom_7b1 ALiBi 32/32 heads, llama2_7b RoPE inside 32/8)"
    for (k = 1; k <= nk; k++) if ((key = order[k]) ~ /^go test/)
        printf "%-70s %s\n", substr(key, 9), fmt(s1[key])
}
