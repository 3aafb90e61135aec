#!/usr/bin/env bash
# Follows README.md's "Use it from your module" in a fresh module outside
# the repository: the steps and files are the README's own code blocks (the
# ones after a "<!-- downstream: step -->" or "<!-- downstream: file NAME -->"
# marker), run in order with POSENC pointing at this checkout. Then checks
# that vendor/ stays under 11 MB and that posenc verify verified rows.
# Offline: everything must come from the module cache (GOPROXY=off), and
# go.sum lines are computed from it (GOSUMDB=off: the cache's modules were
# checked against the checksum database when they were downloaded).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
readme=$repo/README.md
limit=$((11 * 1000 * 1000))

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mod=$work/ropeapp
mkdir "$mod"

# The README's marked blocks, as one script: a step block verbatim, a file
# block as a heredoc writing that file.
awk '
	/^<!-- downstream: step -->$/ { want = "step"; next }
	/^<!-- downstream: file [^ ]+ -->$/ { want = "file"; name = $4; next }
	want != "" && /^```/ && !inblock { inblock = 1; n++
		if (want == "file") print "cat > " name " <<'"'"'POSENC_README_EOF'"'"'"
		next }
	inblock && /^```$/ { inblock = 0
		if (want == "file") print "POSENC_README_EOF"
		want = ""; next }
	inblock { print }
	END { if (n == 0) exit 1 }
' "$readme" >"$work/steps.sh" || { echo "tools/downstream: no marked blocks in README.md"; exit 1; }
for want in 'go mod edit -tool=' 'go generate' 'go mod vendor' 'verify -targets auto' 'cat > rope.yaml'; do
	grep -qF -- "$want" "$work/steps.sh" || { echo "tools/downstream: README.md's marked blocks lack '$want'"; exit 1; }
done

# The module cache holds what posenc's own builds and tests fetched; go mod
# tidy in the new module also wants the modules of its dependencies' tests
# (gopkg.in/check.v1 for go.yaml.in/yaml/v3). Fetch posenc's whole module
# graph first (go mod download all), while the proxy is still allowed (a
# no-op on a warm cache), from a scratch copy of go.mod and go.sum so that
# the checkout's go.sum is left as it is.
graph=$(mktemp -d)
cp "$repo/go.mod" "$repo/go.sum" "$graph/"
(cd "$graph" && go mod download all)
rm -rf "$graph"

cd "$mod"
export POSENC=$repo GOPROXY=off GOSUMDB=off GOFLAGS=-mod=mod
go mod init example.com/ropeapp
echo "== README steps in $mod"
bash -euo pipefail -x "$work/steps.sh" 2>&1 | tee "$work/out.txt"

echo "== checks"
grep -q 'variants of 1 specs verified' "$work/out.txt" || { echo "posenc verify printed no verified rows"; exit 1; }
grep -q '^tool github.com/posenc/posenc/cmd/posenc$' go.mod || { echo "go.mod lacks the posenc tool line"; exit 1; }
size=$(du -sb vendor | cut -f1)
echo "vendor/: $size bytes (limit $limit)"
if [ "$size" -ge "$limit" ]; then
	du -sb vendor/*/* | sort -n | tail -8
	echo "tools/downstream: vendor/ is $size bytes, over $limit"
	exit 1
fi
if [ -d vendor/gonum.org ] || [ -d vendor/codeberg.org ]; then
	echo "tools/downstream: vendor/ holds plotting modules"
	exit 1
fi
go run .
