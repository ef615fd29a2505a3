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

	{
		long n = EFA_RESUME_UNSET;

		ok(efa_resume_parse("2", &n, &err) == 0 && n == 2, "--efa-resume=2");
		ok(efa_resume_parse("0", &n, &err) == 0 && n == 0, "--efa-resume=0: never");
		ok(efa_resume_parse("100", &n, &err) == 0 && n == 100, "the largest value");
		ok(efa_resume_parse("101", &n, &err) == -1, "one more is refused");
		has_str(err.msg, "invalid --efa-resume value '101'", "  message quotes the value");
		has_str(err.msg, "up to 100", "  and says the limit");
		ok(efa_resume_parse("-1", &n, &err) == -1, "a negative value is refused");
		ok(efa_resume_parse("2x", &n, &err) == -1, "trailing text is refused");
		ok(efa_resume_parse(NULL, &n, &err) == -1, "--efa-resume needs a value");
		ok(efa_resume_parse("(null)", &n, &err) == -1, "  also as slurmstepd forwards none");
		ok(efa_resume_parse("99999999999999999999", &n, &err) == -1, "overflow is refused");
	}
	return done_testing();
}
