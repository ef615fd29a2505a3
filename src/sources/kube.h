/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where Slurm nodes run, from the Kubernetes API: in Slinky each Slurm
 * node is a pod whose hostname is the node's name (kube.c says where that
 * comes from); the Kubernetes node the pod is scheduled on carries the
 * zone (topology.kubernetes.io/zone) and, on instance types
 * EKS knows the network topology of, the EC2 network layers
 * (topology.k8s.aws/network-node-layer-1, -2, -3; layer 1 on top).
 * Sync lists nodes and the pods of one namespace, paged; the repair
 * ladder's replace cordons a node and deletes a pod (kube_replace).
 */
#ifndef EFA_SOURCES_KUBE_H
#define EFA_SOURCES_KUBE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"
#include "common/config/efa_conf.h"

#define KUBE_DEFAULT_URL "https://kubernetes.default.svc"
#define KUBE_SERVICE_ACCOUNT "/var/run/secrets/kubernetes.io/serviceaccount"
#define KUBE_ZONE_LABEL "topology.kubernetes.io/zone"
#define KUBE_LAYER_LABEL "topology.k8s.aws/network-node-layer-"
#define KUBE_POD_HOSTNAME_LABEL "nodeset.slinky.slurm.net/pod-hostname"

struct kube_placement {
	char *name;		/* the Slurm node's name (the pod's hostname) */
	char *pod;		/* the pod's name */
	int deleting;		/* metadata.deletionTimestamp is set */
	char *node;		/* the Kubernetes node; NULL while unscheduled */
	char *zone;		/* NULL: the node has no zone label */
	char **layers;		/* nlayers entries, top first; NULL where unlabelled */
};

struct kube_map {
	struct kube_placement *pods;	/* sorted by Slurm node name */
	size_t npods;
	size_t nlayers;
	char *namespace;
};

/* Where the API is and who asks (efa.conf's Kubernetes*= keys); NULL: the
 * default, the service account's files. */
struct kube_options {
	const char *url;		/* KubernetesURL=, else KUBE_DEFAULT_URL */
	const char *token_file;		/* KubernetesTokenFile= */
	const char *ca_file;		/* KubernetesCAFile= */
	const char *namespace;		/* KubernetesNamespace=, else the service
					 * account's, else "slurm" */
	bool allow_plain_http;		/* AllowPlainHTTP=yes */
	size_t nlayers;			/* how many layer labels to read */
};

/* efa.conf's Kubernetes*= keys and AllowPlainHTTP=, with nlayers layer labels. */
void kube_options_from_config(const struct efa_config *cfg, size_t nlayers, struct kube_options *o);

/*
 * Reads every pod of the namespace and every node and joins them. 0, or
 * -1 with err filled.
 */
int kube_read(const struct kube_options *o, struct kube_map *map, struct efa_error *err);

/*
 * The placement of the Slurm node's pod, or NULL: the pod whose hostname
 * is the node's name; of several (one being deleted beside its
 * replacement), one that is staying and scheduled.
 */
const struct kube_placement *kube_find(const struct kube_map *map, const char *name);

/*
 * Replaces a Slurm node's pod as Slinky's NodeSet allows: cordons the
 * Kubernetes node it runs on (spec.unschedulable, as kubectl cordon), so
 * the node's own repair (EKS node auto-repair, Karpenter) takes the
 * machine and no pod lands there again, then deletes the pod, which the
 * NodeSet's controller recreates elsewhere with the same hostname. 0, or
 * -1 with err filled (a pod already gone counts as deleted).
 */
int kube_replace(const struct kube_options *o, const struct kube_placement *p,
		 struct efa_error *err);

void kube_map_clear(struct kube_map *map);

#endif
