/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where Slurm nodes run, from the EC2 API: each node is the instance whose
 * private IPv4 address is the node's address (NodeAddr=); its zone comes
 * from DescribeInstances (Placement.AvailabilityZone) and its network
 * layers from DescribeInstanceTopology (top layer first; instance types
 * the API does not cover have none). Requests are signed with AWS
 * Signature Version 4 (credentials from the environment, else the
 * instance's role through IMDSv2), paged, and tried again with backoff
 * when EC2 throttles. What was learned is kept while a node keeps its
 * address, for Ec2MaxAge=: each round asks EC2 only about addresses it
 * has not seen lately (an instance stopped and started gets
 * new network nodes, a terminated one's address goes to another, and
 * EC2 may give an UltraServer's capacityBlockId only a while after its
 * launch).
 */
#ifndef EFA_SOURCES_EC2_H
#define EFA_SOURCES_EC2_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"
#include <time.h>

/* The API version of the EC2 Query API the requests use. */
#define EC2_API_VERSION "2016-11-15"

struct ec2_instance {
	char *address;		/* private IPv4 address */
	char *id;
	char *type;
	char *zone;
	char **layers;		/* nlayers entries, top first, NULL below the
				 * deepest EC2 gives; NULL: no topology */
	char *block;		/* capacityBlockId: its UltraServer; NULL: none */
	time_t learned;
};

struct ec2;

/* efa.conf's Ec2*= keys. */
struct ec2_options {
	const char *region;	/* Ec2Region=, else $AWS_REGION or
				 * $AWS_DEFAULT_REGION, else the instance
				 * metadata service */
	const char *endpoint;	/* Ec2Endpoint=, else https://ec2.REGION.amazonaws.com */
	long max_age;		/* Ec2MaxAge=, seconds */
	bool allow_plain_http;	/* AllowPlainHTTP=yes */
	size_t nlayers;		/* how many layers to keep, top first (an
				 * instance type with more is said once) */
};

/* A client of EC2's Query API; NULL with err filled. */
struct ec2 *ec2_open(const struct ec2_options *opts, struct efa_error *err);

/*
 * Learns the instances at these addresses (n of them; repeats and
 * addresses that are no IPv4 are skipped), asking EC2 only about the ones
 * not already known, and forgets the ones no longer given. 0, or -1 with
 * err filled (what was known stays).
 */
int ec2_refresh(struct ec2 *e, char *const *addresses, size_t n, struct efa_error *err);

/* The instance at address, or NULL. */
const struct ec2_instance *ec2_find(const struct ec2 *e, const char *address);

/* The region the client signs for. */
const char *ec2_region(const struct ec2 *e);

void ec2_close(struct ec2 *e);

#endif
