/* SPDX-License-Identifier: Apache-2.0 */
#include "common/config/mode.h"
#include "tap.h"

int main(void)
{
	struct efa_error err = { 0 };
	enum efa_mode m = EFA_MODE_UNSET;
	enum efa_bind b = EFA_BIND_UNSET;

	ok(efa_mode_parse(NULL, &m, &err) == 0 && m == EFA_MODE_REQUIRED,
	   "bare --efa means required");
	ok(efa_mode_parse("(null)", &m, &err) == 0 && m == EFA_MODE_REQUIRED,
	   "Slurm's forwarded '(null)' means a bare --efa");
	ok(efa_mode_parse("auto", &m, &err) == 0 && m == EFA_MODE_AUTO, "--efa=auto");
	ok(efa_mode_parse("off", &m, &err) == 0 && m == EFA_MODE_OFF, "--efa=off");
	ok(efa_mode_parse("required", &m, &err) == 0 && m == EFA_MODE_REQUIRED, "--efa=required");
	ok(efa_mode_parse("maybe", &m, &err) == -1, "--efa=maybe refused");
	has_str(err.msg, "invalid --efa value 'maybe'", "  message quotes the value");
	has_str(err.msg, "--efa=auto", "  and lists what works");
	ok(efa_mode_parse("Auto", &m, &err) == -1, "values are exact");
	is_str(efa_mode_name(EFA_MODE_AUTO), "auto", "mode name");

	ok(efa_bind_parse("closest", &b, &err) == 0 && b == EFA_BIND_CLOSEST, "--efa-bind=closest");
	ok(efa_bind_parse("none", &b, &err) == 0 && b == EFA_BIND_NONE, "--efa-bind=none");
	ok(efa_bind_parse("near", &b, &err) == -1, "--efa-bind=near refused");
	has_str(err.msg, "--efa-bind=closest", "  message lists what works");
	ok(efa_bind_parse(NULL, &b, &err) == -1, "--efa-bind needs a value");
	is_str(efa_bind_name(EFA_BIND_NONE), "none", "bind name");
	return done_testing();
}
