# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the integration tests' lib.sh and by bench/run.

# A program slurmd or slurmctld runs (HealthCheckProgram=, RebootProgram=)
# has no SLURM_CONF: the link to slurm.conf where this Slurm's commands look
# without it, as ParallelCluster installs Slurm: PREFIX/etc/slurm.conf for a
# Slurm under its own prefix (there already with SLURM_EFA_TEST_LAYOUT=
# pcluster); for Debian's own Slurm, slurmd's configless cache
# /run/slurm/conf/slurm.conf. Sets conf_placed (the link made, "" when none
# was needed) and conf_made_dir; false when another cluster's slurm.conf is
# in the way. unplace_slurm_conf takes them away. Reads SLURM_CONF,
# SLURM_PREFIX and SLURM_EFA_TEST_LAYOUT (plain when unset).
place_slurm_conf() {
	conf_placed="" conf_made_dir=""
	if [ "${SLURM_EFA_TEST_LAYOUT:-plain}" = pcluster ]; then
		return 0
	elif [ "$SLURM_PREFIX" != /usr ]; then
		mkdir -p "$SLURM_PREFIX/etc"
		[ ! -e "$SLURM_PREFIX/etc/slurm.conf" ] || return 1
		conf_placed=$SLURM_PREFIX/etc/slurm.conf
	elif [ ! -e /etc/slurm/slurm.conf ] && [ ! -e /run/slurm/conf/slurm.conf ]; then
		[ -d /run/slurm/conf ] || conf_made_dir=/run/slurm/conf
		mkdir -p /run/slurm/conf
		conf_placed=/run/slurm/conf/slurm.conf
	else
		return 1
	fi
	ln -sfn "$SLURM_CONF" "$conf_placed"
}
unplace_slurm_conf() {
	[ -z "$conf_placed" ] || rm -f "$conf_placed"
	[ -z "$conf_made_dir" ] || rmdir "$conf_made_dir" 2>/dev/null || true
	conf_placed="" conf_made_dir=""
}
