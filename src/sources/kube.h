/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where Slurm nodes run, from the Kubernetes API: in Slinky each Slurm
 * node is a pod whose hostname is the node's name (kube.c says where that
 * comes from); the Kubernetes node the pod is scheduled on carries the
 * zone (topology.kubernetes.io/zone) and, on instance types
 * EKS knows the network topology of, the EC2 network layers
 * (topology.k8s.aws/network-node-layer-1, -2, -3; layer 1 on top).
 * Read-only: list nodes and list pods in one namespace, paged.
 */
#ifndef EFA_SOURCES_KUBE_H
#define EFA_SOURCES_KUBE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"

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

void kube_map_clear(struct kube_map *map);

#endif
