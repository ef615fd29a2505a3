#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The map of the tests is complete: every test file is named in
# test/README.md (the fuzz harnesses in test/fuzz/README.md), so that a
# maintainer looking for what covers a part finds it (TAP).
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

readme=$top_srcdir/test/README.md
fuzz_readme=$top_srcdir/test/fuzz/README.md
# name FILE: how the maps name it: unit and fuzz tests and integration
# files without their extension, CLI tests and Lua files by file name.
name() {
	case $1 in
	*/unit/* | */fuzz/*) basename "$1" .c ;;
	*/integration/*) basename "$1" .sh ;;
	*) basename "$1" ;;
	esac
}
files=0
missing=""
for f in "$top_srcdir"/test/unit/test_*.c "$top_srcdir"/test/cli/*.sh "$top_srcdir"/test/lua/*.lua \
	"$top_srcdir"/test/integration/t_*.sh "$top_srcdir"/test/fuzz/fuzz_*.c; do
	[ -e "$f" ] || continue
	files=$((files + 1))
	map=$readme
	[[ $f == */fuzz/* ]] && map=$fuzz_readme
	grep -qw -- "$(name "$f")" "$map" || missing+=" ${f#"$top_srcdir"/}"
done
ok $((files < 80)) "found the test files ($files, 80 or more)"
is "$missing" "" "every one is named in test/README.md (fuzz harnesses: test/fuzz/README.md)"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
