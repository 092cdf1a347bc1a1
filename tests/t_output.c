/* SPDX-License-Identifier: MIT */
/*
 * t_output.c - the files earthrun --trace and --stats=json write: a
 * device target (a copy of /dev/null, then /dev/null itself) is written in
 * place and stays a device; two jobs with the same paths at once each
 * write one complete file (their part files do not collide) and leave no
 * part behind; a full file system (a 4 KiB tmpfs) or a device that
 * answers ENOSPC (a copy of /dev/full) makes earthrun exit non-zero naming
 * the file, and nothing partial is left.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "job.h"
#include "json.h"

TestSuite(output, .timeout = 240);

static char dir[64];

static void make_dir(void)
{
	t_scratch_dir(dir, sizeof(dir), "t_output");
}

static void remove_dir(void)
{
	t_remove_dir(dir);
}

/* The names in directory d other than . and .., space-separated. */
static void list_dir(const char *d, char *out, size_t len)
{
	out[0] = 0;
	DIR *dp = opendir(d);
	cr_assert(dp, "opendir %s", d);
	struct dirent *e;
	while ((e = readdir(dp))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		size_t k = strlen(out);
		snprintf(out + k, len - k, "%s%s", k ? " " : "", e->d_name);
	}
	closedir(dp);
}

/* A character device c major:minor at dir/name; false if it cannot be
 * made (then the test says so and skips that part). */
static bool make_dev(const char *name, unsigned major_, unsigned minor_,
		     char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	return mknod(path, S_IFCHR | 0666, makedev(major_, minor_)) == 0;
}

static bool is_chr(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

Test(output, device_target_is_written_in_place)
{
	make_dir();
	char null[128], names[1024];
	if (!make_dev("null", 1, 3, null, sizeof(null))) {
		remove_dir();
		cr_skip_test("cannot mknod a copy of /dev/null here");
	}
	static struct t_cmd c;
	t_sh(&c, 60, "%s -n 2 --trace %s --stats=json %s %s/multinode 1000",
	     T_EARTHRUN, null, null, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s%s", c.status, c.out, c.err);
	cr_assert(is_chr(null), "%s is no longer a character device\n%s", null,
		  c.err);
	list_dir(dir, names, sizeof(names));
	cr_assert_str_eq(names, "null", "left in %s: %s", dir, names);
	remove_dir();
	/* The real one, now that a copy stayed a device. */
	t_sh(&c, 60,
	     "%s -n 2 --trace /dev/null --stats=json /dev/null "
	     "%s/multinode 1000",
	     T_EARTHRUN, T_PROG_DIR);
	cr_assert_eq(c.status, 0, "status %d\n%s%s", c.status, c.out, c.err);
	cr_assert(is_chr("/dev/null"), "/dev/null is no longer a device");
}

/* The events in a trace file (-1: not one complete JSON document). */
static long trace_events(const char *path, char *err, size_t errlen)
{
	struct json *j = json_parse_file(path, err, errlen);
	if (!j)
		return -1;
	const struct json *ev = json_get(j, "traceEvents");
	long n = ev && ev->type == JSON_ARR ? (long)ev->n : -1;
	json_free(j);
	return n;
}

static long stats_nodes(const char *path, char *err, size_t errlen)
{
	struct json *j = json_parse_file(path, err, errlen);
	if (!j)
		return -1;
	const struct json *arr = json_get(j, "nodes");
	long n = arr && arr->type == JSON_ARR ? (long)arr->n : -1;
	json_free(j);
	return n;
}

Test(output, concurrent_jobs_with_the_same_paths)
{
	make_dir();
	static struct t_cmd c;
	/* The jobs run in dir: the programs by absolute path. */
	char cwd[2048];
	cr_assert(getcwd(cwd, sizeof(cwd)));
	for (int round = 0; round < 3; round++) {
		t_sh(&c, 120,
		     "sh -c 'cd %s && E=\"%s/%s -n 2 --trace t.json "
		     "--stats=json s.json %s/%s/multinode 100000\"; "
		     "$E >a.log 2>&1 & p1=$!; $E >b.log 2>&1 & p2=$!; "
		     "wait $p1; r1=$?; wait $p2; echo \"$r1 $?\"'",
		     dir, cwd, T_EARTHRUN, cwd, T_PROG_DIR);
		cr_assert_str_eq(c.out, "0 0\n", "statuses %s%s", c.out, c.err);
		char path[128], err[256], names[1024];
		snprintf(path, sizeof(path), "%s/t.json", dir);
		long ev = trace_events(path, err, sizeof(err));
		cr_assert_gt(ev, 8, "round %d: %s: %ld events (%s)", round,
			     path, ev, ev < 0 ? err : "");
		snprintf(path, sizeof(path), "%s/s.json", dir);
		long nodes = stats_nodes(path, err, sizeof(err));
		cr_assert_eq(nodes, 2, "round %d: %s: %ld nodes (%s)", round,
			     path, nodes, nodes < 0 ? err : "");
		list_dir(dir, names, sizeof(names));
		cr_assert(!strstr(names, ".part") && !strstr(names, ".tmp"),
			  "round %d: left in %s: %s", round, dir, names);
	}
	remove_dir();
}

/* earthrun writing FILE (with flag) onto a full target fails naming it,
 * and leaves nothing in the directory d but what `keep` names. */
static void full_target(const char *flag, const char *file, const char *d,
			const char *keep)
{
	static struct t_cmd c;
	char names[1024];
	t_sh(&c, 60, "%s -n 2 %s %s %s/multinode 100000", T_EARTHRUN, flag,
	     file, T_PROG_DIR);
	cr_assert_neq(c.status, 0, "%s %s: status 0\n%s", flag, file, c.err);
	cr_assert(c.status != 124 && c.status < 128, "%s %s: status %d\n%s",
		  flag, file, c.status, c.err);
	cr_assert(strstr(c.err, file), "%s: the file is not named\n%s", flag,
		  c.err);
	cr_assert(strstr(c.err, "No space left on device"),
		  "%s %s: the error is not named\n%s", flag, file, c.err);
	char said[200];
	snprintf(said, sizeof(said), "%s written\n", file);
	cr_assert(!strstr(c.err, said), "%s %s:\n%s", flag, file, c.err);
	list_dir(d, names, sizeof(names));
	cr_assert_str_eq(names, keep, "%s %s: left in %s: %s", flag, file, d,
			 names);
}

/* The tmpfs is unmounted and the directory removed even when an assertion
 * ends the test early. */
static char fs[128];
static void unmount_fs(void)
{
	if (fs[0])
		umount2(fs, MNT_DETACH);
	fs[0] = 0;
	remove_dir();
}

Test(output, full_file_system_fails_and_leaves_nothing, .fini = unmount_fs)
{
	make_dir();
	char file[160];
	snprintf(fs, sizeof(fs), "%s/fs", dir);
	cr_assert(mkdir(fs, 0755) == 0);
	if (mount("tmpfs", fs, "tmpfs", 0, "size=4k") != 0) {
		fs[0] = 0;
		cr_skip_test("cannot mount a tmpfs here (%s): the /dev/full "
			     "test covers a full target",
			     strerror(errno));
	}
	snprintf(file, sizeof(file), "%s/t.json", fs);
	full_target("--trace", file, fs, "");
	snprintf(file, sizeof(file), "%s/s.json", fs);
	full_target("--stats=json", file, fs, "");
}

Test(output, full_device_fails_and_leaves_nothing)
{
	make_dir();
	char full[128];
	if (!make_dev("full", 1, 7, full, sizeof(full))) {
		remove_dir();
		cr_skip_test("cannot mknod a copy of /dev/full here");
	}
	full_target("--trace", full, dir, "full");
	cr_assert(is_chr(full), "%s is no longer a device", full);
	full_target("--stats=json", full, dir, "full");
	cr_assert(is_chr(full), "%s is no longer a device", full);
	remove_dir();
}
