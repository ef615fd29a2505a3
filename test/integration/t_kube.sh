# SPDX-License-Identifier: Apache-2.0
# Zones from Kubernetes (ZoneSource=kubernetes), put into Slurm's node
# features by sync through the real slurmrestd (WriteFeatures=yes), so that
# the job_submit bridge's zone constraints follow where the pods run. The
# Kubernetes API is test/standins/fakekube over TLS: it puts n1 in us-west-2b
# and n3 in us-west-2a, the opposite of slurm.conf's features; n2 and n4
# stay. The pods are named as Slinky names them (slurm-worker-n-1 runs
# n1: its hostname), so the zones come only through the hostname join.
# 22.05's v0.0.38 cannot update nodes, which sync must say.

kube_dir=$SLURM_EFA_CLUSTER/kube
if ! kube_api_start "$kube_dir"; then
	ok 1 "test/standins/fakekube is built and openssl makes a certificate (scripts/install-deps installs libssl-dev and openssl)"
	return 0
fi
kube_api_pods "$kube_dir" n1:kn-b n2:kn-a n3:kn-a n4:kn-b
scontrol token username=root lifespan=900 >"$kube_dir/root.jwt"
chmod 600 "$kube_dir/root.jwt"

# slurmrestd acts as root (a JWT over TCP): updating nodes needs an admin.
mapfile -t kube_lines < <(kube_conf_lines "$kube_dir")
write_efa_conf "RestURL=$SLURMRESTD_URL" "RestUser=root" "RestTokenFile=$kube_dir/root.jwt" \
	"Snapshot=$kube_dir/snapshot.json" "SnapshotMaxAge=60" "WriteFeatures=yes" "${kube_lines[@]}" \
	"PartitionName=gpu SingleZone=yes"
chmod 644 "$EFA_CONF"
features_of() {	# "n1 FEATURES n2 FEATURES ..." as Slurm has them now
	sinfo -h -N -o '%N %b' | sort -u | paste -sd ' '
}

run "$top_builddir/slurm-efa" sync --once --config "$EFA_CONF"
is "$rc" 0 "sync --once with ZoneSource=kubernetes and WriteFeatures=yes: exit 0"
is "$(jq -r '[.nodes[] | "\(.name)=\(.zone)"] | join(" ")' "$kube_dir/snapshot.json" 2>&1)" \
	"n1=us-west-2b n2=us-west-2a n3=us-west-2a n4=us-west-2b" "  the snapshot has the pods' zones"
if [ "$SLURMRESTD_API" = v0.0.38 ]; then
	like "$out" "features: cannot update node n1: slurmrestd's v0.0.38 cannot update nodes: that needs v0.0.40 or later" \
		"  22.05's slurmrestd cannot update nodes: said, node by node"
	is "$(features_of)" "n1 az-us-west-2a,efa n2 az-us-west-2a,efa n3 az-us-west-2b,efa n4 az-us-west-2b,efa" \
		"  and Slurm's features are untouched"
else
	like "$out" "features: updated 2 nodes through slurmrestd \(n1: az-us-west-2a,efa -> az-us-west-2b,efa, n3: az-us-west-2b,efa -> az-us-west-2a,efa\)" \
		"  sync updated the two nodes Kubernetes places elsewhere, and said so"
	is "$(features_of)" "n1 az-us-west-2b,efa n2 az-us-west-2a,efa n3 az-us-west-2a,efa n4 az-us-west-2b,efa" \
		"  Slurm's nodes carry the pods' zones now"
	run "$top_builddir/slurm-efa" sync --once --config "$EFA_CONF"
	unlike "$out" "features: updated" "the next sync finds nothing to update"
	like "$(cat "$kube_dir/requests.log")" "GET /api/v1/namespaces/slurm/pods\?limit=500" \
		"  (it asked the Kubernetes API for the namespace's pods)"

	# The bridge's zone constraint now follows Kubernetes.
	batch -N2 --efa=auto -J kube-zone "echo nodes=\$SLURM_JOB_NODELIST"
	like "$(sed -n 's/^nodes=//p' <<<"$out")" '^n\[(2-3|1,4)\]$' \
		"an --efa job of 2 nodes lands in one zone as Kubernetes places the pods"
	batch -N1 -C az-us-west-2b -w n1 "echo ran"
	is "$out" "ran" "  and -C az-us-west-2b reaches n1, whose pod runs in us-west-2b"

	# WriteFeatures=yes through the unix socket: slurmrestd's own user is
	# no admin, and sync says what to do.
	scontrol update NodeName=n1 AvailableFeatures=az-us-west-2a,efa ActiveFeatures=az-us-west-2a,efa
	sed -i -e "s|^RestURL=.*|RestURL=unix:$SLURMRESTD_SOCKET|" -e '/^RestUser=/d' -e '/^RestTokenFile=/d' \
		"$EFA_CONF"
	chown "$SLURMRESTD_USER" "$kube_dir"
	chmod 644 "$kube_dir/token"
	run runuser -u "$SLURMRESTD_USER" -- "$top_builddir/slurm-efa" sync --once --config "$EFA_CONF" \
		--snapshot "$kube_dir/as-rest.json"
	like "$out" "features: cannot update node n1: .*Invalid user id.*: WriteFeatures=yes needs slurmrestd to act as root, SlurmUser or an AdminLevel=Admin user" \
		"WriteFeatures=yes as a user who may not update nodes: said, with what to do"
	scontrol update NodeName=n3 AvailableFeatures=az-us-west-2b,efa ActiveFeatures=az-us-west-2b,efa
fi
bg_kill "$kube_pid" || true
wait "$kube_pid" 2>/dev/null || true
is "$(features_of)" "n1 az-us-west-2a,efa n2 az-us-west-2a,efa n3 az-us-west-2b,efa n4 az-us-west-2b,efa" \
	"the nodes' features of slurm.conf are back"
write_efa_conf
