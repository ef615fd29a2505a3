#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What the loadable objects leave to their host: spank_efa.so only Slurm's
# slurm_*/spank_* functions (slurmd and slurmstepd provide them), the Lua
# module only Lua's API. Anything else is a symbol that lazy binding hides
# in a development build and that a package built with -z now (Debian's
# default) cannot even dlopen (TAP).
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

unresolved() {	# unresolved SO: symbols no library it links provides
	ldd -r "$1" 2>&1 | sed -n 's/^undefined symbol: \([^[:space:]]*\).*/\1/p' | sort -u
}

left=$(unresolved "$top_builddir/.libs/spank_efa.so" | grep -Ev '^(slurm_|spank_)' || true)
is "$left" "" "spank_efa.so needs nothing from its host but slurm_* and spank_*"
exported=$(nm -D --defined-only "$top_builddir/.libs/spank_efa.so" | awk '{print $3}' |
	grep -Ev '^(slurm_spank_[a-z_]+|plugin_(name|type|version))$' || true)
is "$exported" "" "  and exports only the SPANK entry points"
# Every srun and slurmstepd loads it (a job's prolog and epilog too, with
# or without EFA): a library it needed would be one more object each of
# them opens, maps and binds.
needed=$(readelf -d "$top_builddir/.libs/spank_efa.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
	grep -Ev '^(libc\.so\.[0-9]+|ld-linux.*)$' || true)
is "$needed" "" "  and needs no shared library but libc"

left=$(unresolved "$top_builddir/.libs/slurm_efa.so" | grep -Ev '^(lua_|luaL_)' || true)
is "$left" "" "slurm_efa.so (Lua) needs nothing from its host but Lua's API"
exported=$(nm -D --defined-only "$top_builddir/.libs/slurm_efa.so" | awk '{print $3}' |
	grep -v '^luaopen_slurm_efa$' || true)
is "$exported" "" "  and exports only luaopen_slurm_efa"

exported=$(nm -D --defined-only "$top_builddir/.libs/libslurmrest.so" | awk '{print $3}' |
	grep -v '^slurmrest_' || true)
is "$exported" "" "libslurmrest.so exports only slurmrest_*"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
