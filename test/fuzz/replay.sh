#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Replays each fuzz harness over its seeds and every input that ever crashed
# it (TAP). Under the sanitizer build this is where ASan/UBSan see them.
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
n=0
failed=0
made=$(mktemp -d)
trap 'rm -rf "$made"' EXIT
"$top_srcdir/test/fuzz/rest-seeds" "$top_builddir/test/fixtures/rest" "$made/rest"
for name in conf profile rest snapshot options constraint path hostlist topology compact record apply; do
	inputs=()
	for dir in "$top_srcdir/test/fuzz/seeds/$name" "$made/$name" "$top_srcdir/test/fuzz/regress/$name"; do
		[ -d "$dir" ] && inputs+=("$dir"/*)
	done
	n=$((n + 1))
	if out=$("$top_builddir/test/fuzz/replay_$name" "${inputs[@]}" 2>&1); then
		echo "ok $n - $name: ${#inputs[@]} inputs replay cleanly"
	else
		echo "not ok $n - $name: an input fails"
		sed 's/^/# /' <<<"$out" | tail -n 30
		failed=$((failed + 1))
	fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
