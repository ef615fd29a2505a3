# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by bench/run and bench/launch_ab: the figures every benchmark row
# is quoted with.

# summary FILE KEY [COLUMN]: "median p25 p75 n lo hi" of the values of the
# "KEY VALUE..." lines of FILE ("-": standard input), in COLUMN (2, the
# first value, unless given). lo and hi bound the median with 95 %
# confidence, whatever the distribution: the order statistics of ranks
# n/2 - 0.98 sqrt(n) and 1 + n/2 + 0.98 sqrt(n) (the binomial's normal
# approximation; all of them below 6 values).
summary() {
	awk -v k="$2" -v c="${3:-2}" '$1 == k { print $c }' "$1" | sort -g | awk '
		function q(p,   h, l) {
			h = (NR - 1) * p + 1; l = int(h)
			return l >= NR ? v[NR] : v[l] + (h - l) * (v[l + 1] - v[l])
		}
		{ v[NR] = $1 }
		END {
			if (!NR) { print "nan nan nan 0 nan nan"; exit }
			lo = int(NR / 2 - 0.98 * sqrt(NR)); hi = NR / 2 + 1 + 0.98 * sqrt(NR)
			hi = hi == int(hi) ? hi : int(hi) + 1
			if (NR < 6 || lo < 1) lo = 1
			if (NR < 6 || hi > NR) hi = NR
			printf "%.6g %.6g %.6g %d %.6g %.6g\n", q(0.5), q(0.25), q(0.75), NR, v[lo], v[hi]
		}'
}

# ratios FILE A B: summary's line of A_i / B_i, the i-th A line over the
# i-th B line (one pair per round).
ratios() {
	awk -v a="$2" -v b="$3" '
		$1 == a { x[++na] = $2 }
		$1 == b { y[++nb] = $2 }
		END { for (i = 1; i <= na && i <= nb; i++) if (y[i] > 0) print "r", x[i] / y[i] }' \
		"$1" | summary - r
}
