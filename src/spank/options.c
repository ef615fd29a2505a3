#include <stddef.h>

#include <slurm/spank.h>

#include "options.h"

enum option_id {
	OPT_EFA,
	OPT_EFA_BIND,
};

static struct efa_options opts;

static int option_cb(int val, const char *optarg, int remote)
{
	struct efa_error err;
	int rc = -1;

	switch (val) {
	case OPT_EFA:
		rc = efa_mode_parse(optarg, &opts.efa, &err);
		break;
	case OPT_EFA_BIND:
		rc = efa_bind_parse(optarg, &opts.bind, &err);
		break;
	}
	/* Remote values were checked by srun/sbatch already; an error there
	 * means a corrupted environment, worth one log line, not a crash. */
	if (rc)
		slurm_error("efa: %s%s", err.msg, remote ? " (in the job's environment)" : "");
	return rc;
}

static struct spank_option options[] = {
	{ "efa", "[auto|required|off]",
	  "Use EFA for this job: 'required' (the default for a bare --efa) fails "
	  "steps on nodes without usable EFA, 'auto' uses EFA where present, "
	  "'off' opts out.",
	  2, OPT_EFA, option_cb },
	{ "efa-bind", "none|closest",
	  "Per-task accelerator and EFA NIC binding: 'closest' gives each task "
	  "its GPUs and the NICs nearest to them, 'none' (default) leaves NIC "
	  "choice to NCCL.",
	  1, OPT_EFA_BIND, option_cb },
};

int efa_options_register(spank_t sp)
{
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		spank_err_t rc = spank_option_register(sp, &options[i]);

		if (rc != ESPANK_SUCCESS) {
			slurm_error("efa: cannot register --%s: %s", options[i].name,
				    spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

const struct efa_options *efa_options_get(void)
{
	return &opts;
}
