# SPDX-License-Identifier: Apache-2.0
# Slurm's accounting as Slinky deploys it: slurmdbd over a real MariaDB
# (test/cluster/up --accounting: both private to the cluster, on its own
# ports). A finished --efa job and its steps are in sacct. (run.sh leaves
# this test out, saying why, where this Slurm or this machine has no MySQL
# storage.)

write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
run sbatch --parsable --wait -N2 -w 'n[1-2]' --efa -J efa-acct -o /dev/null --wrap 'srun true'
job=$out
is "$rc" 0 "a two-node --efa job runs to its end"
until_up 30 sh -c "sacct -n -P -X -j $job -o JobName,State | grep -qx efa-acct.COMPLETED" ||
	diag "sacct: $(sacct -j "$job" 2>&1)"
is "$(sacct -n -P -X -j "$job" -o JobName,State,NodeList,Partition)" "efa-acct|COMPLETED|n[1-2]|gpu" \
	"sacct shows the job: its name, state, nodes and partition"
is "$(sacct -n -P -j "$job" -o JobID,State | grep -v '\.extern|' | sort | paste -sd ' ')" \
	"$job.0|COMPLETED $job.batch|COMPLETED $job|COMPLETED" "  and its steps"
