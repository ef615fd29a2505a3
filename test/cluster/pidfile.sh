# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by test/cluster/up, down and node and by the integration tests'
# lib.sh: how they read a daemon's pid file.

# The pid a pid file names: its first number, as Slurm's own read_pidfile
# reads it (fscanf "%lu"). A daemon that a reconfigure re-executed rewrites
# the file in place without truncating it (26.05.3's daemonize.c,
# update_pidfile: rewind, then fprintf), so a pid with fewer digits than the
# one before it leaves that one's tail on a second line ("418\n9\n").
pidfile_pid() {	# pidfile_pid PIDFILE
	local pid
	read -r pid <"$1" 2>/dev/null && [[ $pid =~ ^[0-9]+$ ]] && echo "$pid"
}
