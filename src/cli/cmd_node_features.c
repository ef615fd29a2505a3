/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa node-features: the features a node should register with, for
 * slurmd --conf "Features=$(slurm-efa node-features)" or a Slinky NodeSet:
 * <ZoneFeaturePrefix><zone> from the EC2 instance metadata service
 * (IMDSv2), "efa" when a usable EFA device exists, and the instance type.
 * What cannot be found is left out and named on stderr.
 *
 * IMDS does not serve the EC2 network-node layers (they come from the
 * DescribeInstanceTopology API), so no topology features are printed.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/node/node.h"
#include "sources/imds.h"
#include "cli.h"

#define IMDS_TIMEOUT_MS 1000

const char cmd_node_features_usage[] =
	"usage: slurm-efa node-features [--imds URL | --no-imds] [--timeout MS]\n"
	"                               [--config FILE] [--root DIR] [--json]\n";

struct request {
	const char *imds_url;	/* NULL: IMDS not asked */
	const char *why_not;	/* why IMDS is not asked */
	long timeout_ms;
};

struct found {
	char *zone;
	char *imds_type;
	const char *type;
	const char *type_source;	/* efa.conf, imds, dmi */
	size_t nics, usable_nics;
	char efa_problem[512];
	struct efa_error imds;	/* why the metadata service said nothing; msg "" when it did */
};

static int parse(int argc, char **argv, struct request *req)
{
	char *end;

	req->imds_url = imds_base_url();
	req->timeout_ms = IMDS_TIMEOUT_MS;
	if (imds_disabled()) {
		req->imds_url = NULL;
		req->why_not = "AWS_EC2_METADATA_DISABLED=true";
	}
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *value = NULL;

		if (!strcmp(arg, "--no-imds")) {
			req->imds_url = NULL;
			req->why_not = "--no-imds";
			continue;
		}
		if (!strncmp(arg, "--imds=", 7) || !strncmp(arg, "--timeout=", 10))
			value = strchr(arg, '=') + 1;
		else if ((!strcmp(arg, "--imds") || !strcmp(arg, "--timeout")) && i + 1 < argc)
			value = argv[++i];
		if (!value) {
			fprintf(stderr, "slurm-efa node-features: unexpected argument '%s'\n%s", arg, cmd_node_features_usage);
			return -1;
		}
		if (!strncmp(arg, "--imds", 6)) {
			req->imds_url = value;
			req->why_not = NULL;
			continue;
		}
		req->timeout_ms = strtol(value, &end, 10);
		if (*end || req->timeout_ms <= 0 || req->timeout_ms > 60000) {
			fprintf(stderr, "slurm-efa node-features: --timeout %s: use milliseconds from 1 to 60000, e.g. --timeout 1000\n",
				value);
			return -1;
		}
	}
	return 0;
}

/* Zones and instance types only: anything else cannot be a Slurm feature. */
static bool feature_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_", *s))
			return false;
	return true;
}

/* One metadata item; NULL after recording why in f->imds. */
static char *imds_item(struct imds *m, const char *path, struct found *f)
{
	char *value = NULL;

	if (imds_get(m, path, &value, &f->imds))
		return NULL;
	if (!feature_ok(value)) {
		efa_error_set(&f->imds,
			      "the metadata service answered %s with '%.64s', which cannot be a Slurm feature",
			      path, value);
		free(value);
		return NULL;
	}
	return value;
}

/* Returns -1 only for a bad URL (a usage error). */
static int ask_imds(const struct request *req, bool want_type, struct found *f)
{
	struct imds *m;
	int bad_url;

	if (!req->imds_url) {
		efa_error_set(&f->imds, "the metadata service was not asked (%s)", req->why_not);
		return 0;
	}
	m = imds_open(req->imds_url, req->timeout_ms, &bad_url, &f->imds);
	if (!m)
		return bad_url ? -1 : 0;
	f->zone = imds_item(m, "placement/availability-zone", f);
	if (want_type)
		f->imds_type = imds_item(m, "instance-type", f);
	imds_close(m);
	return 0;
}

static void choose_type(const struct efa_node *node, struct found *f)
{
	if (node->instance_type_configured) {
		f->type = node->instance_type;
		f->type_source = "efa.conf";
	} else if (f->imds_type) {
		f->type = f->imds_type;
		f->type_source = "imds";
	} else if (node->instance_type && feature_ok(node->instance_type)) {
		f->type = node->instance_type;
		f->type_source = "dmi";
	}
}

static int print_text(const char *const *features, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%s%s", i ? "," : "", features[i]);
	if (n)
		putchar('\n');
	return 0;
}

static int print_json(const char *const *features, size_t n, const struct found *f,
		      const char *zone_feature)
{
	json_t *list = json_array(), *doc;

	for (size_t i = 0; list && i < n; i++)
		json_array_append_new(list, json_string(features[i]));
	doc = json_pack("{s:o*, s:s?, s:s?, s:s?, s:s?, s:b, s:I, s:I, s:s?, s:s?}",
			"features", list, "zone", f->zone, "zone_feature", zone_feature,
			"instance_type", f->type, "instance_type_source", f->type_source,
			"efa", f->usable_nics > 0, "efa_devices", (json_int_t)f->nics,
			"usable_efa_devices", (json_int_t)f->usable_nics,
			"efa_problem", f->efa_problem[0] ? f->efa_problem : NULL,
			"imds_problem", f->imds.msg[0] ? f->imds.msg : NULL);
	if (cli_print_json(doc)) {
		fprintf(stderr, "slurm-efa: out of memory\n");
		return -1;
	}
	return 0;
}

/* What could not be found, and what to do about it. */
static void report_missing(const struct found *f)
{
	if (!f->zone)
		fprintf(stderr, "slurm-efa node-features: no availability zone feature: %s. On EC2, check that the metadata service is enabled (in a container, its hop limit must be 2 or more); elsewhere, give the zone feature yourself\n",
			f->imds.msg);
	if (!f->type)
		fprintf(stderr, "slurm-efa node-features: no instance type feature: %s, and DMI names none: set InstanceType= in efa.conf\n",
			f->imds.msg[0] ? f->imds.msg : "the metadata service named none");
}

int cmd_node_features(int argc, char **argv, const struct cli_common *common)
{
	struct request req = { NULL };
	struct found f = { NULL };
	struct efa_config *cfg = NULL;
	struct efa_node *node = NULL;
	struct efa_error err;
	const char *features[3];
	char *zone_feature = NULL;
	size_t n = 0;
	int rc = EXIT_USAGE;

	if (parse(argc, argv, &req))
		return EXIT_USAGE;
	if (efa_config_find_and_load(common->config, &cfg, &err) ||
	    efa_node_discover(common->root, cfg->instance_type, &node, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		goto out;
	}
	if (ask_imds(&req, !node->instance_type_configured, &f)) {
		fprintf(stderr, "slurm-efa node-features: %s\n", f.imds.msg);
		goto out;
	}
	choose_type(node, &f);
	f.nics = node->nnics;
	f.usable_nics = efa_node_usable_nics(node);
	efa_node_efa_problem(node, f.efa_problem, sizeof(f.efa_problem));
	if (f.zone && asprintf(&zone_feature, "%s%s", cfg->zone_feature_prefix, f.zone) < 0) {
		zone_feature = NULL;
		fprintf(stderr, "slurm-efa: out of memory\n");
		goto out;
	}
	if (zone_feature)
		features[n++] = zone_feature;
	if (f.usable_nics)
		features[n++] = "efa";
	if (f.type)
		features[n++] = f.type;
	if (common->json ? print_json(features, n, &f, zone_feature) : print_text(features, n))
		goto out;
	fflush(stdout);	/* the features first, then what is missing */
	report_missing(&f);
	rc = f.zone && f.type ? 0 : EXIT_REFUSED;
out:
	free(zone_feature);
	free(f.zone);
	free(f.imds_type);
	efa_node_free(node);
	efa_config_free(cfg);
	return rc;
}
