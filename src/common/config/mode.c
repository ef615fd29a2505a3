/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/config/mode.h"

static const char *const mode_names[] = {
	[EFA_MODE_UNSET] = "unset",
	[EFA_MODE_OFF] = "off",
	[EFA_MODE_AUTO] = "auto",
	[EFA_MODE_REQUIRED] = "required",
};

static const char *const bind_names[] = {
	[EFA_BIND_UNSET] = "unset",
	[EFA_BIND_NONE] = "none",
	[EFA_BIND_CLOSEST] = "closest",
};

static const char *const rank_order_names[] = {
	[EFA_RANK_ORDER_UNSET] = "unset",
	[EFA_RANK_ORDER_SLURM] = "slurm",
	[EFA_RANK_ORDER_TOPOLOGY] = "topology",
};

static int bare_flag(const char *arg)
{
	return !arg || !*arg || !strcmp(arg, "(null)");
}

int efa_mode_parse(const char *arg, enum efa_mode *mode, struct efa_error *err)
{
	if (bare_flag(arg)) {
		*mode = EFA_MODE_REQUIRED;
		return 0;
	}
	for (int m = EFA_MODE_OFF; m <= EFA_MODE_REQUIRED; m++) {
		if (!strcmp(arg, mode_names[m])) {
			*mode = m;
			return 0;
		}
	}
	return efa_error_set(err, "invalid --efa value '%.64s': use --efa, --efa=auto, --efa=required or --efa=off",
			     arg);
}

const char *efa_mode_name(enum efa_mode mode)
{
	return mode_names[mode];
}

int efa_bind_parse(const char *arg, enum efa_bind *bind, struct efa_error *err)
{
	if (!bare_flag(arg)) {
		for (int b = EFA_BIND_NONE; b <= EFA_BIND_CLOSEST; b++) {
			if (!strcmp(arg, bind_names[b])) {
				*bind = b;
				return 0;
			}
		}
	}
	return efa_error_set(err, "invalid --efa-bind value '%.64s': use --efa-bind=none or --efa-bind=closest",
			     arg ? arg : "");
}

const char *efa_bind_name(enum efa_bind bind)
{
	return bind_names[bind];
}

int efa_rank_order_parse(const char *arg, enum efa_rank_order *order, struct efa_error *err)
{
	if (!bare_flag(arg)) {
		for (int o = EFA_RANK_ORDER_SLURM; o <= EFA_RANK_ORDER_TOPOLOGY; o++) {
			if (!strcmp(arg, rank_order_names[o])) {
				*order = o;
				return 0;
			}
		}
	}
	return efa_error_set(err, "invalid --efa-rank-order value '%.64s': use --efa-rank-order=topology (ranks grouped by network switch) or --efa-rank-order=slurm",
			     arg ? arg : "");
}

const char *efa_rank_order_name(enum efa_rank_order order)
{
	return rank_order_names[order];
}

int efa_resume_parse(const char *arg, long *n, struct efa_error *err)
{
	char *end;
	long v;

	if (bare_flag(arg) || !isdigit((unsigned char)arg[0]))
		goto bad;
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v > EFA_RESUME_MAX)
		goto bad;
	*n = v;
	return 0;
bad:
	return efa_error_set(err, "invalid --efa-resume value '%.64s': use a whole number up to %d, e.g. --efa-resume=3 runs the job again up to 3 times when one of its nodes fails (0: never)",
			     arg ? arg : "", EFA_RESUME_MAX);
}

int efa_checkpoint_keep_parse(const char *arg, long *keep, struct efa_error *err)
{
	char *end;
	long n;

	if (!arg || !isdigit((unsigned char)arg[0]))
		goto bad;
	errno = 0;
	n = strtol(arg, &end, 10);
	if (errno || *end || n > EFA_CKPT_KEEP_MAX)
		goto bad;
	*keep = n;
	return 0;
bad:
	return efa_error_set(err, "invalid --checkpoint-keep value '%.64s': use a whole number up to %ld, e.g. --checkpoint-keep=3 keeps the 3 newest checkpoints (0 keeps all)",
			     arg ? arg : "", EFA_CKPT_KEEP_MAX);
}
