/* SPDX-License-Identifier: MIT */
/*
 * t_tc_diag.c - one negative test per diagnostic of the earth_tc plugin:
 * each tests/tc/diag/NAME.tc holds misuse and, in EXPECT comments, the
 * "line:col: error: message" lines earthcc must print (with the file name
 * in front; or "FILE:line:col: ..." for a header it includes). earthcc
 * must fail, print every expected line, and give a fix hint with each
 * error.
 */
#include "tc/tc_run.h"
#include <dirent.h>

TestSuite(tc_diag, .timeout = 60);

static char out[65536];

static void diag(const char *name)
{
	char path[256], gen[128], line[1024];
	tc_require();
	snprintf(path, sizeof path, "tests/tc/diag/%s.tc", name);
	snprintf(gen, sizeof gen, "/tmp/earth_tc_diag_%d.c", (int)getpid());
	int rc = tc_sh(out, sizeof out, TC_EARTHCC " --tc-only --emit-c=%s %s",
		       gen, path);
	unlink(gen);
	cr_expect_neq(rc, 0, "%s: earthcc accepted it:\n%s", path, out);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	int expects = 0;
	while (fgets(line, sizeof line, f)) {
		char *e = strstr(line, "/* EXPECT: ");
		if (!e)
			continue;
		e += strlen("/* EXPECT: ");
		char *end = strstr(e, " */");
		if (end)
			*end = 0;
		/* "line:col: ..." is in the .tc file; "FILE:line:col: ..."
		 * in a header it includes; up to the fix, or with it. */
		char want[1300];
		const char *tail = strstr(e, "; fix: ") ? "" : "; fix: ";
		if (*e >= '0' && *e <= '9')
			snprintf(want, sizeof want, "%s:%s%s", path, e, tail);
		else
			snprintf(want, sizeof want, "%s%s", e, tail);
		cr_expect(strstr(out, want), "missing:\n  %s\nin:\n%s", want,
			  out);
		expects++;
	}
	fclose(f);
	cr_expect_gt(expects, 0, "%s has no EXPECT line", path);
}

#define DIAG(name)                                                             \
	Test(tc_diag, name)                                                    \
	{                                                                      \
		diag(#name);                                                   \
	}
DIAG(goto_other_fiber)
DIAG(goto_fiber_label)
DIAG(fall_through)
DIAG(end_of_body)
DIAG(unknown_fiber_init)
DIAG(unknown_fiber_spawn)
DIAG(slot_range)
DIAG(global_deref)
DIAG(global_cast)
DIAG(invoke_count)
DIAG(token_types)
DIAG(not_threaded)
DIAG(vla)
DIAG(alloca)
DIAG(return )
DIAG(nested_label)
DIAG(nested_named_label)
DIAG(no_slots)
DIAG(macro_body)
DIAG(shadowed_macro)
DIAG(header_def)
DIAG(global_placement)
DIAG(threaded_call)
DIAG(to_global_local)
DIAG(get_read_early)
DIAG(volatile_spin)
DIAG(get_order)
DIAG(op_width)
DIAG(remote_local_ptr)
DIAG(invoke_order)
DIAG(fiber_never_runs)
DIAG(shared_uncovered)
DIAG(shared_write_read)
DIAG(shared_range)
DIAG(shared_as_global)
DIAG(shared_in_c)
DIAG(shared_arg)
DIAG(shared_no_insert)
DIAG(shared_nest_refused)
DIAG(shared_guarded_count)
DIAG(atomic_after_global)
#define N_DIAG 41

/* Every file in tests/tc/diag has a test above. */
Test(tc_diag, every_file_is_tested)
{
	DIR *d = opendir("tests/tc/diag");
	cr_assert_not_null(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strstr(e->d_name, ".tc") != NULL;
	closedir(d);
	cr_expect_eq(n, N_DIAG, "tests/tc/diag has %d files, %d tests", n,
		     N_DIAG);
}
