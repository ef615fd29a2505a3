/* SPDX-License-Identifier: Apache-2.0 */
/*
 * efa.conf: Slurm-style "Key=Value" lines. Global keys first, then one
 * "PartitionName=NAME ..." line per partition. Keys are case-insensitive as
 * in slurm.conf; values may be double-quoted to hold spaces; '#' starts a
 * comment. Unknown keys, bad values and duplicates are errors that name the
 * file and line.
 */
#ifndef EFA_CONF_H
#define EFA_CONF_H

#include <limits.h>
#include <stddef.h>

#include "common/base/error.h"
#include "common/config/mode.h"
#include "common/config/signal.h"

#define EFA_CONFIG_MAX_SIZE (1024 * 1024)

/* NodeCacheDir='s default: /run is emptied at every boot (FHS 3.0, 3.15). */
#define EFA_NODE_CACHE_DIR "/run/slurm-efa"

/* HealthReturnPasses='s largest value: a node back after a day of checks. */
#define EFA_HEALTH_PASSES_MAX 10000
/* HealthTimeout='s largest value: an hour. */
#define EFA_HEALTH_TIMEOUT_MAX 3600
#define EFA_HEALTH_COUNTER_MAX 1000000000
/* A size key set to "unlimited". */
#define EFA_BYTES_UNLIMITED LONG_MAX

enum efa_on_missing {
	EFA_ON_MISSING_ACCEPT = 0,
	EFA_ON_MISSING_REJECT,
};

enum efa_topology {
	EFA_TOPOLOGY_NONE = 0,
	EFA_TOPOLOGY_TREE,
	EFA_TOPOLOGY_BLOCK,
};

/* The syntax of TopologyFile=: topology.conf, or topology.yaml (Slurm
 * 25.05 and later), which holds the tree and the blocks side by side. */
enum efa_topology_format {
	EFA_TOPOLOGY_FORMAT_AUTO = 0,
	EFA_TOPOLOGY_FORMAT_CONF,
	EFA_TOPOLOGY_FORMAT_YAML,
};

/* Where sync learns each node's zone and network layers. */
enum efa_source {
	EFA_SOURCE_FEATURES = 0,	/* the node's Slurm features */
	EFA_SOURCE_KUBERNETES,		/* its pod's Kubernetes node's labels */
	EFA_SOURCE_EC2,			/* the EC2 API, for its instance */
};

enum efa_tristate {
	EFA_UNSET = -1,
	EFA_NO = 0,
	EFA_YES = 1,
};

enum efa_ckpt_fs {
	EFA_CKPT_FS_UNSET = 0,
	EFA_CKPT_FS_LUSTRE,
	EFA_CKPT_FS_ANY,
};

struct efa_range {
	long lo, hi;
};

/* HangAction=: what a hung job's nodes do (common/health/hang.h). */
enum efa_hang_action {
	EFA_HANG_ACTION_UNSET = 0,
	EFA_HANG_NOTIFY,	/* tell the job, record it */
	EFA_HANG_REQUEUE,	/* and run it again (auto-resume: its budget) */
	EFA_HANG_CANCEL,	/* and cancel it */
};

/* HangCheckInterval='s default, and how many of them HangAfter= must
 * span at least: a hang is judged from samples, never from one. */
#define EFA_HANG_CHECK_INTERVAL_DEFAULT 60
#define EFA_HANG_MIN_INTERVALS 3

/* RepairAction=: the rungs of the repair ladder a node slurm-efa drained
 * may climb (common/health/repair.h); bits, so that a node in several
 * partitions gets only the rungs they all allow. */
enum efa_repair_action {
	EFA_REPAIR_UNSET = -1,		/* a partition's: the global one */
	EFA_REPAIR_NONE = 0,
	EFA_REPAIR_REBOOT = 1,		/* scontrol reboot, RebootProgram */
	EFA_REPAIR_REPLACE = 2,		/* power saving's forced power down */
	EFA_REPAIR_REBOOT_REPLACE = 3,	/* a reboot first, a new instance
					 * when the fault comes back */
};

/* RepairWindow='s default: a fault found within an hour of the node's
 * boot is one a reboot did not clear. */
#define EFA_REPAIR_WINDOW_DEFAULT 3600
/* RepairMax='s default: one node of a partition under repair at a time. */
#define EFA_REPAIR_MAX_DEFAULT 1
#define EFA_REPAIR_MAX_LIMIT 100000

struct efa_partition {
	char *name;
	enum efa_mode efa;		/* EFA_MODE_UNSET: user decides */
	enum efa_tristate single_zone;
	char *checkpoint_root;		/* NULL: no checkpoint policy */
	enum efa_ckpt_fs checkpoint_fs;
	long checkpoint_keep;		/* -1: keep everything */
	long resume;			/* Resume=: --efa-resume's default;
					 * EFA_RESUME_UNSET when not given */
	enum efa_rank_order rank_order;	/* --efa-rank-order's default; UNSET: slurm */
	struct efa_signal checkpoint_signal;	/* sent to EFA jobs' batch shells
						 * before their time limit;
						 * number 0: none */
	long hang_after;		/* HangAfter=: seconds; 0: no hang detection */
	enum efa_hang_action hang_action;	/* UNSET: notify */
	enum efa_repair_action repair_action;	/* UNSET: the global one */
	long repair_max;		/* RepairMax=; -1: the global one */
	unsigned line;			/* its PartitionName= line in the file */
};

struct efa_config {
	char *path;			/* NULL when built from defaults */
	char *instance_type;		/* NULL: detect from DMI */
	char *profile_dir;
	char *node_cache_dir;		/* the node's description, kept per boot */
	char *rest_url;
	char *rest_user;
	char *rest_token_file;
	char *rest_ca_file;		/* NULL: the system's CA bundle */
	char *rest_api_version;		/* pinned, "v0.0.45"; NULL: negotiate */
	char *snapshot;
	long snapshot_max_age;		/* seconds */
	long ec2_max_age;		/* seconds an EC2 answer is trusted */
	char *zone_feature_prefix;
	enum efa_on_missing on_snapshot_missing;
	enum efa_topology topology;
	char **topology_feature_prefixes;	/* NULL-terminated, top layer first */
	char *capacity_block_feature_prefix;	/* EC2's capacityBlockId */
	char *topology_file;
	enum efa_topology_format topology_format;
	char *topology_reload;
	enum efa_source zone_source;
	enum efa_source topology_source;
	char *ec2_endpoint;		/* NULL: https://ec2.REGION.amazonaws.com */
	char *ec2_region;		/* NULL: $AWS_REGION, else the instance's */
	char *kubernetes_url;		/* NULL: in-cluster defaults */
	char *kubernetes_token_file;
	char *kubernetes_ca_file;
	char *kubernetes_namespace;
	enum efa_tristate write_features;	/* sync sets the sources' features in Slurm */
	enum efa_tristate allow_plain_http;	/* tokens over http:// to another host */
	char **force_env;		/* variables set over the user's value */
	enum efa_tristate distributed_env;	/* RANK, MASTER_ADDR, ... */
	enum efa_tristate container_host_libraries;	/* the node's EFA libraries in images without */
	struct efa_range master_ports;	/* MasterPortRange=LO-HI */
	unsigned int checkpoint_mode;	/* permission bits of created directories */
	long checkpoint_timeout;	/* seconds a checkpoint file system may take */
	char *checkpoint_env;		/* CHECKPOINT_DIR, or the site's name */
	long health_return_passes;	/* checks in a row that return a node
					 * slurm-efa drained; 0: never by itself */
	long health_timeout;		/* seconds a whole health check may take;
					 * 0: each part its own limit only */
	/* The locked memory slurmd must allow every job (its soft
	 * RLIMIT_MEMLOCK); EFA_BYTES_UNLIMITED: unlimited; 0: not judged. */
	long health_min_locked_memory;
	/* How much an EFA port's error counter may rise between two health
	 * checks (common/health/counters.h); 0: not judged. */
	long health_retrans_timeouts;
	long health_unresponsive_remotes;
	long health_impaired_connections;
	/* The GPUs and Neuron devices the node's Gres= names must be there
	 * (common/health/gres.h). */
	enum efa_tristate health_gres;
	/* The bridge asks Slurm 26.05's expedited requeue for jobs it makes
	 * resumable (SlurmctldParameters=enable_expedited_requeue). */
	enum efa_tristate resume_expedite;
	long hang_check_interval;	/* seconds between a node's samples of a job */
	enum efa_tristate sick_links;		/* compare the nodes' links in --efa steps */
	enum efa_tristate sick_link_drain;	/* drain a node whose link stands out */
	double sick_link_floor;		/* retransmitted per sent packet a node must pass */
	long sick_link_factor;		/* times the median of its peers' it must pass */
	/* Where nodes write their EFA figures for node_exporter's textfile
	 * collector (common/usage/metrics.h); NULL: nowhere, and steps take
	 * no reading of the counters. */
	char *metrics_dir;
	/* A step on several nodes that ran this long (seconds) and moved
	 * next to nothing over EFA is told it ran without it
	 * (common/usage/verdict.h); 0: never. */
	long fallback_after;
	/* Each --efa step on several nodes adds its EFA figures to its job's
	 * AdminComment (common/usage/job_record.h). */
	enum efa_tristate job_record;
	/* The repair ladder slurm-efa sync runs for nodes slurm-efa
	 * drained (common/health/repair.h). */
	enum efa_repair_action repair_action;
	long repair_window;		/* seconds after a boot a fault counts against it */
	long repair_max;		/* nodes of a partition under repair at once */
	struct efa_partition *partitions;
	size_t npartitions;
};

/* A configuration holding only the built-in defaults. NULL on ENOMEM. */
struct efa_config *efa_config_defaults(void);

/*
 * Parses len bytes of text as efa.conf; name is used in messages.
 * Returns 0 and *out, or -1 with err naming "name:line".
 */
int efa_config_parse(const char *text, size_t len, const char *name,
		     struct efa_config **out, struct efa_error *err);

/* Reads and parses path. */
int efa_config_load(const char *path, struct efa_config **out,
		    struct efa_error *err);

/*
 * Finds efa.conf the way every component does: explicit (may be NULL),
 * else $SLURM_EFA_CONF, else the build's sysconfdir. A missing file is an
 * error when it was named explicitly or by the environment; the default
 * path missing yields the built-in defaults.
 */
int efa_config_find_and_load(const char *explicit_path, struct efa_config **out,
			     struct efa_error *err);

/* The partition's settings, or NULL when efa.conf does not name it. */
const struct efa_partition *efa_config_partition(const struct efa_config *cfg,
						 const char *name);

void efa_config_free(struct efa_config *cfg);

#endif
