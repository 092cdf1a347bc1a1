/* SPDX-License-Identifier: MIT */
/*
 * t_earthcc.c - earthcc as a C compiler driver: gcc's options with their
 * argument joined or as the next word (-L dir, -isystem dir, -MF f, -iquote
 * dir, -x c, ...), -c/-S/-E and the dependency options (-MMD -MP from a
 * Makefile) on .tc files as gcc's on .c files, -o refused with -c and
 * several inputs, --showme as Open MPI's wrappers, --help and --version.
 * Each test builds small .tc/.c files in a scratch directory.
 * Skipped, with a message, when clang-14 or the plugin is missing.
 */
#include "tc/tc_run.h"

#include <limits.h>
#include <sys/stat.h>

TestSuite(earthcc, .timeout = 120);

static char root[PATH_MAX], build[PATH_MAX], dir[64];
static char out[65536];

static void put(const char *name, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

static int exists(const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

/* Runs `earthcc ARGS` in the scratch directory; output in out. */
static int ecc(const char *fmt, ...)
{
	char args[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	return tc_sh(out, sizeof out,
		     "cd '%s' && EARTH_BUILD='%s' '%s/threaded-c/earthcc' %s",
		     dir, build, root, args);
}

/* Runs a shell command in the scratch directory; output in out. */
static int in_dir(const char *cmd)
{
	return tc_sh(out, sizeof out, "cd '%s' && %s", dir, cmd);
}

static const char work_h[] =
    "#ifndef WORK_H\n#define WORK_H\n#define WORK_BIAS 0\n"
    "THREADED square(int x, int *GLOBAL out, SPTR done);\n#endif\n";
static const char work_tc[] =
    "#include \"work.h\"\n"
    "THREADED square(int x, int *GLOBAL out, SPTR done)\n{\n"
    "\tDATA_RSYNC_I(x * x + WORK_BIAS, out, done);\n"
    "\tEND_FUNCTION();\n}\n";
static const char main_tc[] =
    "#include <stdio.h>\n#include \"work.h\"\nint twice(int);\n"
    "THREADED main()\n{\n\tSLOT SYNC_SLOTS[1];\n\tint r;\n\n"
    "\tINIT_SYNC(0, 1, 0, THREAD_1);\n"
    "\tTOKEN(square, 7, TO_GLOBAL(&r), SLOT_ADR(0));\n"
    "\tEND_THREAD();\nTHREAD_1:\n"
    "\tprintf(\"square %d twice %d\\n\", r, twice(r));\n"
    "\tEND_FUNCTION();\n}\n";
static const char util_c[] = "int twice(int x) { return 2 * x; }\n";

/* A scratch directory with main.tc, work.tc, work.h and util.c. */
static void setup(void)
{
	tc_require();
	cr_assert_not_null(getcwd(root, sizeof root));
	cr_assert_not_null(realpath(tc_build_dir(), build),
			   "no build directory %s", tc_build_dir());
	tc_tmpdir(dir);
	put("work.h", work_h);
	put("work.tc", work_tc);
	put("main.tc", main_tc);
	put("util.c", util_c);
}

static void teardown(void)
{
	if (dir[0])
		tc_cleanup(dir);
	dir[0] = 0;
}

/* A program of two .tc files and a .c file. */
/*
 * Every file of the scratch folder is made a minute old, but never older
 * than the newest header the dependency files name outside it (earth.h,
 * threadedc.h in the source tree, which a checkout or an edit may have
 * just written: the objects would then look out of date), and the clock
 * is let pass that time, so a file written next is newer than all.
 */
static void age_all(void)
{
	int rc =
	    in_dir("n=$(( $(date +%s) - 60 )); "
		   "for f in $(cat *.d | tr ' \\\\' '\\n\\n' | sed 's/:$//' | "
		   "grep '^/' | sort -u); do t=$(stat -c %Y \"$f\"); "
		   "[ \"$t\" -ge \"$n\" ] && n=$((t + 1)); done; "
		   "touch -d @$n *; "
		   "while [ $(date +%s) -le $n ]; do sleep 0.2; done");
	cr_assert_eq(rc, 0, "aging the scratch files: %s", out);
}

static void expect_prog_runs(const char *prog, const char *want)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "timeout 60 ./%s", prog);
	int rc = in_dir(cmd);
	cr_expect_eq(rc, 0, "%s: %d\n%s", prog, rc, out);
	cr_expect(strstr(out, want), "%s: wanted '%s' in:\n%s", prog, want,
		  out);
}

/* -c with several inputs and no -o: one .o each, as gcc; they link. */
Test(earthcc, c_several_inputs_one_object_each, .init = setup, .fini = teardown)
{
	int rc = ecc("-O2 -c main.tc work.tc util.c");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(exists("main.o") && exists("work.o") && exists("util.o"),
		  "missing objects");
	rc = ecc("main.o work.o util.o -o prog");
	cr_assert_eq(rc, 0, "%s", out);
	expect_prog_runs("prog", "square 49 twice 98");
}

/* -o with -c and several inputs: refused as gcc refuses it. */
Test(earthcc, o_with_c_and_several_inputs_refused, .init = setup,
     .fini = teardown)
{
	int rc = ecc("-c main.tc work.tc -o both.o");
	cr_expect_neq(rc, 0, "earthcc accepted it:\n%s", out);
	cr_expect(strstr(out, "cannot specify '-o' with '-c', '-S' or '-E' "
			      "with multiple files"),
		  "%s", out);
	cr_expect(!exists("both.o"), "both.o was written");
	rc = ecc("-S main.tc util.c -o both.s");
	cr_expect_neq(rc, 0, "-S: accepted:\n%s", out);
	/* One source and an object is not several files (gcc agrees). */
	rc = ecc("-c util.c && '%s/threaded-c/earthcc' -c work.tc util.o "
		 "-o w.o",
		 root);
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect(exists("w.o"));
}

/* -E prints the generated C, preprocessed, with lines of the .tc. */
Test(earthcc, E_prints_preprocessed_generated_c, .init = setup,
     .fini = teardown)
{
	int rc = ecc("-E work.tc");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "\"work.tc\""), "no line of work.tc:\n%.2000s",
		  out);
	cr_expect(strstr(out, "earth_data_rsync_i"),
		  "not generated C:\n%.2000s", out);
	/* The macro is expanded; its name stays only as the source table's
	 * string. */
	cr_expect(!strstr(out, "DATA_RSYNC_I("), "not preprocessed");
	cr_expect(strstr(out, "\"DATA_RSYNC_I\""), "no source table row");
	cr_expect(!strstr(out, "linker input file unused"), "%.2000s", out);
	rc = ecc("-E work.tc -o work.i && grep -c earth_data_rsync_i work.i");
	cr_expect_eq(rc, 0, "-E -o: %s", out);
	rc = ecc("-E -D WORK_BIAS_X=1 util.c");
	cr_expect(rc == 0 && strstr(out, "twice"), "-E on .c: %s", out);
}

/* -S writes the assembly: STEM.s, or the -o file. */
Test(earthcc, S_writes_assembly, .init = setup, .fini = teardown)
{
	int rc = ecc("-O2 -S work.tc util.c");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(exists("work.s") && exists("util.s"), "no .s files");
	rc = in_dir("grep -l 'square' work.s && grep -l twice util.s");
	cr_expect_eq(rc, 0, "%s", out);
	rc = ecc("-S main.tc -o m.s && grep -c '\\.text' m.s");
	cr_expect_eq(rc, 0, "-S -o: %s", out);
}

/* -L DIR (a space) and -l NAME, and -I DIR, as gcc. */
Test(earthcc, L_dir_with_space, .init = setup, .fini = teardown)
{
	int rc = in_dir("mkdir -p lib inc && "
			"printf 'int twice(int x) { return 2 * x; }\\n' > "
			"lib/t.c && gcc -c lib/t.c -o lib/t.o && "
			"ar rcs lib/libtwice.a lib/t.o && mv work.h inc/");
	cr_assert_eq(rc, 0, "%s", out);
	rc = ecc("-I inc main.tc work.tc -L lib -l twice -o prog");
	cr_assert_eq(rc, 0, "%s", out);
	expect_prog_runs("prog", "square 49 twice 98");
	rc = ecc("-I inc main.tc work.tc -Llib -ltwice -o prog2");
	cr_assert_eq(rc, 0, "%s", out);
	expect_prog_runs("prog2", "square 49 twice 98");
}

/* -isystem DIR: <header> found in DIR, for the .tc translation too. */
Test(earthcc, isystem_dir, .init = setup, .fini = teardown)
{
	cr_assert_eq(in_dir("mkdir -p sys"), 0);
	put("sys/bias.h", "#define SYS_BIAS 1000\n");
	put("sys.tc",
	    "#include <stdio.h>\n#include <bias.h>\n"
	    "THREADED main()\n{\n\tprintf(\"bias %d\\n\", SYS_BIAS);\n"
	    "\tEND_FUNCTION();\n}\n");
	int rc = ecc("-isystem sys sys.tc -o prog");
	cr_assert_eq(rc, 0, "%s", out);
	expect_prog_runs("prog", "bias 1000");
	rc = ecc("-isystemsys sys.tc -o prog2");
	cr_expect_eq(rc, 0, "joined: %s", out);
}

/* Other options whose argument is the next word: -D X, -U X, -include F,
 * -iquote DIR, -idirafter DIR, -Xlinker A, -x c FILE, -MF F, -MT T. */
Test(earthcc, separate_arguments, .init = setup, .fini = teardown)
{
	cr_assert_eq(in_dir("mkdir -p q after"), 0);
	put("q/quoted.h", "#define QUOTED 3\n");
	put("after/late.h", "#define LATE 4\n");
	put("pre.h", "#define PRE 5\n");
	put("helper.src", "int helper(void) { return 6; }\n");
	put("opts.tc",
	    "#include <stdio.h>\n#include \"quoted.h\"\n#include <late.h>\n"
	    "int helper(void);\n"
	    "#ifdef GONE\n#error GONE is defined\n#endif\n"
	    "THREADED main()\n{\n"
	    "\tprintf(\"opts %d\\n\", QUOTED + LATE + PRE + VAL + "
	    "helper());\n\tEND_FUNCTION();\n}\n");
	int rc = ecc("-D VAL=100 -D GONE -U GONE -include pre.h -iquote q "
		     "-idirafter after opts.tc -x c helper.src -x none "
		     "-Xlinker --no-as-needed -o prog");
	cr_assert_eq(rc, 0, "%s", out);
	expect_prog_runs("prog", "opts 118");
	rc = ecc("-c work.tc -MMD -MF deps.d -MT mytarget");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(exists("deps.d") && !exists("-iquote"), "no deps.d");
	rc = in_dir("cat deps.d");
	cr_expect(strstr(out, "mytarget:") && strstr(out, "work.tc") &&
		      strstr(out, "work.h"),
		  "deps.d:\n%s", out);
}

/* -MM prints the rule of a .tc: the .tc and the headers it includes. */
Test(earthcc, MM_names_tc_and_headers, .init = setup, .fini = teardown)
{
	int rc = ecc("-MM work.tc");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "work.o: work.tc") && strstr(out, "work.h"), "%s",
		  out);
	cr_expect(!strstr(out, "stdio.h"), "-MM lists system headers:\n%s",
		  out);
	rc = ecc("-MM -MT obj/work.o -MP work.tc");
	cr_expect(rc == 0 && strstr(out, "obj/work.o: work.tc") &&
		      strstr(out, "\nwork.h:"),
		  "%s", out);
}

/* A Makefile with -MMD -MP dependency files: touching a header rebuilds
 * what includes it; with nothing changed make does nothing. */
Test(earthcc, makefile_mmd_mp_rebuilds, .init = setup, .fini = teardown)
{
	char mk[2 * PATH_MAX + 512];
	snprintf(mk, sizeof mk,
		 "EARTHCC = EARTH_BUILD='%s' '%s/threaded-c/earthcc'\n"
		 "prog: main.o work.o util.o\n"
		 "\t$(EARTHCC) $^ -o $@\n"
		 "%%.o: %%.tc\n\t$(EARTHCC) -O2 -MMD -MP -c $< -o $@\n"
		 "%%.o: %%.c\n\t$(EARTHCC) -O2 -MMD -MP -c $< -o $@\n"
		 "-include main.d work.d util.d\n",
		 build, root);
	put("Makefile", mk);
	const char *make = "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make";
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s", make);
	int rc = in_dir(cmd);
	cr_assert_eq(rc, 0, "first make: %s", out);
	expect_prog_runs("prog", "square 49 twice 98");
	rc = in_dir("cat main.d");
	cr_expect(strstr(out, "main.o:") && strstr(out, "main.tc") &&
		      strstr(out, "work.h") && strstr(out, "\nwork.h:") &&
		      !strstr(out, "earthcc."),
		  "main.d:\n%s", out);
	/* nothing changed: nothing to do */
	snprintf(cmd, sizeof cmd, "%s -q prog", make);
	rc = in_dir(cmd);
	cr_expect_eq(rc, 0, "make -q after a build: %d\n%s", rc, out);
	snprintf(cmd, sizeof cmd, "%s", make);
	rc = in_dir(cmd);
	cr_expect(rc == 0 && !strstr(out, "earthcc"), "second make: %s", out);
	/* the header changes: both .tc are rebuilt, util.c is not (every
	 * file is made older first: the clock's steps can be coarse) */
	age_all();
	put("work.h", "#ifndef WORK_H\n#define WORK_H\n#define WORK_BIAS 1\n"
		      "THREADED square(int x, int *GLOBAL out, SPTR done);\n"
		      "#endif\n");
	rc = in_dir(cmd);
	cr_assert_eq(rc, 0, "make after the header: %s", out);
	cr_expect(strstr(out, "main.tc") && strstr(out, "work.tc") &&
		      !strstr(out, "util.c"),
		  "rebuilt:\n%s", out);
	expect_prog_runs("prog", "square 50 twice 100");
	/* the .tc changes: only it is rebuilt */
	age_all();
	put("work.tc", "#include \"work.h\"\n"
		       "THREADED square(int x, int *GLOBAL out, SPTR done)\n"
		       "{\n\tDATA_RSYNC_I(x * x + 2, out, done);\n"
		       "\tEND_FUNCTION();\n}\n");
	rc = in_dir(cmd);
	cr_assert_eq(rc, 0, "make after the .tc: %s", out);
	cr_expect(strstr(out, "work.tc") && !strstr(out, "main.tc"),
		  "rebuilt:\n%s", out);
	expect_prog_runs("prog", "square 51 twice 102");
}

/* --showme: the commands, not run; --showme:compile/link: the flags. */
Test(earthcc, showme, .init = setup, .fini = teardown)
{
	int rc = ecc("--showme -O2 main.tc util.c -o prog");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "clang-14 ") && strstr(out, "main.tc") &&
		      strstr(out, "util.c") && strstr(out, "libearth.a") &&
		      strstr(out, "-o prog"),
		  "%s", out);
	cr_expect(!exists("prog"), "--showme built the program");
	rc = ecc("--showme");
	cr_expect(rc == 0 && strstr(out, "gcc") && strstr(out, "-I") &&
		      strstr(out, "libearth_tc.a"),
		  "%s", out);
	rc = ecc("--showme:compile");
	cr_expect(rc == 0 && strstr(out, "threaded-c/include") &&
		      !strstr(out, "libearth"),
		  "%s", out);
	rc = ecc("--showme:link");
	cr_expect(rc == 0 && strstr(out, "libearth_tc.a") &&
		      strstr(out, "libearth.a") && !strstr(out, "-I"),
		  "%s", out);
	/* every library the link line names, hwloc, UCX and PMIx included */
	static char link[sizeof out];
	memcpy(link, out, sizeof out);
	rc = ecc("--showme:libs");
	cr_expect_eq(rc, 0, "%s", out);
	static const char *const want[] = {
	    "earth_tc", "earth", "hwloc", "numa", "uring",
	    "sodium",	"ucp",	 "ucs",	  "pmix", "m"};
	static char words[sizeof out + 2];
	snprintf(words, sizeof words, " %.*s ", (int)strcspn(out, "\n"), out);
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		char w[64];
		snprintf(w, sizeof w, " %s ", want[i]);
		cr_expect(strstr(words, w), "--showme:libs lacks %s:%s",
			  want[i], words);
	}
	/* and each -lX of the link line is one of them */
	for (char *t = strtok(link, " \n"); t; t = strtok(NULL, " \n")) {
		char w[256];
		if (strncmp(t, "-l", 2))
			continue;
		snprintf(w, sizeof w, " %s ", t + 2);
		cr_expect(strstr(words, w), "--showme:libs lacks %s of %s",
			  t + 2, "--showme:link");
	}
	/* the compile flags build C against threadedc.h and earth.h */
	rc = in_dir("printf '#include <threadedc.h>\\nint x;\\n' > p.c");
	rc = ecc("--showme:compile > flags && gcc $(cat flags) -c p.c");
	cr_expect_eq(rc, 0, "%s", out);
}

/* EARTHCC_SANITIZE: the flavour's flags on every compile and the link,
 * its libraries (build/tsan/lib, build/asan/lib); an unknown value and an
 * installed earthcc refuse it, saying what to do. (t_tc_dsm runs programs
 * so built under TSan.) */
Test(earthcc, sanitize, .init = setup, .fini = teardown)
{
	static const struct {
		const char *name, *flag, *lib;
	} fl[] = {{"thread", "-fsanitize=thread ", "/tsan/lib/libearth_tc.a"},
		  {"address",
		   "-fsanitize=address", /* %q: "address\\,undefined" */
		   "/asan/lib/libearth_tc.a"}};
	for (size_t i = 0; i < sizeof fl / sizeof *fl; i++) {
		setenv("EARTHCC_SANITIZE", fl[i].name, 1);
		int rc = ecc("--showme -O2 main.tc util.c -o prog");
		cr_expect_eq(rc, 0, "%s", out);
		/* both compiles and the link */
		int n = 0;
		for (const char *p = out; (p = strstr(p, fl[i].flag)); p++)
			n++;
		cr_expect_eq(n, 3, "%s: %d lines with %s:\n%s", fl[i].name, n,
			     fl[i].flag, out);
		cr_expect(strstr(out, fl[i].lib) && !strstr(out, "/rel/lib/"),
			  "%s: not the %s libraries:\n%s", fl[i].name,
			  fl[i].lib, out);
		rc = ecc("--showme:libdirs");
		cr_expect(rc == 0 && strstr(out, i ? "/asan/lib" : "/tsan/lib"),
			  "%s", out);
	}
	setenv("EARTHCC_SANITIZE", "memory", 1);
	int rc = ecc("-O2 main.tc work.tc util.c -o prog");
	cr_expect(rc == 2 && strstr(out, "EARTHCC_SANITIZE=memory: unknown") &&
		      strstr(out, "use thread or address"),
		  "%d: %s", rc, out);
	cr_expect(!exists("prog"), "an unknown sanitizer built the program");
	/* installed (PREFIX/bin beside PREFIX/include/threadedc.h) */
	rc = in_dir("mkdir -p p/bin p/include && touch p/include/threadedc.h");
	cr_assert_eq(rc, 0, "%s", out);
	rc = tc_sh(out, sizeof out,
		   "cp threaded-c/earthcc '%s/p/bin/' && "
		   "EARTHCC_SANITIZE=thread '%s/p/bin/earthcc' --showme",
		   dir, dir);
	cr_expect(rc == 2 && strstr(out, "installed earthcc") &&
		      strstr(out, "source tree"),
		  "%d: %s", rc, out);
	unsetenv("EARTHCC_SANITIZE");
}

Test(earthcc, help_and_version)
{
	char want[64] = "";
	FILE *f = fopen("VERSION", "r");
	cr_assert_not_null(f, "no VERSION at the top");
	cr_assert_not_null(fgets(want, sizeof want, f));
	fclose(f);
	want[strcspn(want, "\n")] = 0;
	cr_assert(want[0], "VERSION is empty");
	int rc = tc_sh(out, sizeof out, TC_EARTHCC " --help");
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "usage: earthcc") && strstr(out, "--showme"),
		  "%s", out);
	rc = tc_sh(out, sizeof out, TC_EARTHCC " --version");
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, want), "--version: wanted %s:\n%s", want, out);
}

/*
 * The PARMACS side: --showme:parmacs names the macro file; a program in
 * the convention (*.c.in through m4) compiles as plain C with the flags
 * SPLASH-style Makefiles pass; every link takes earth_dsm.ld, so that the
 * program's own globals lie below the libraries' (__earth_rt_data_start,
 * __earth_rt_bss_start), which is what CREATE copies to other nodes.
 */
static const char parmacs_c_in[] =
    "#include <stdio.h>\n"
    "MAIN_ENV\n"
    "struct G { LOCKDEC(l) ALOCKDEC(al, 4) BARDEC(b) PAUSEDEC(f) GSDEC(gs)\n"
    "\tlong sum; } *g;\n"
    "long P = 2;\n"
    "void Work()\n{\n\tlong id, sub;\n\tGET_PID(id);\n"
    "\tLOCK(g->l) g->sum += id; UNLOCK(g->l)\n"
    "\tALOCK(g->al, 1) AULOCK(g->al, 1) BARRIER(g->b, P)\n"
    "\tGETSUB(g->gs, sub, 10, id) (void)sub;\n}\n"
    "int main(int argc, char *argv[])\n{\n\tunsigned long t;\n"
    "\tMAIN_INITENV(,1000000)\n\tCLOCK(t)\n"
    "\tg = (struct G *)G_MALLOC(sizeof(*g));\n"
    "\tLOCKINIT(g->l) ALOCKINIT(g->al, 4) BARINIT(g->b, P) PAUSEINIT(g->f)\n"
    "\tGSINIT(g->gs)\n"
    "\tCREATE(Work, P)\n\tWAIT_FOR_END(P)\n"
    "\tBARINIT(g->b) CREATE(Work) Work(); WAIT_FOR_END(1)\n"
    "\tSPLASH3_ROI_BEGIN SPLASH3_ROI_END NEWPROC AUG_ON AUG_OFF\n"
    "\tearth_dsm_lock_t l1 = AGETL(g->al, 1); (void)l1;\n"
    "\tG_FREE(NU_MALLOC(4096, 1));\n"
    "\tSETPAUSE(g->f) WAITPAUSE(g->f) CLEARPAUSE(g->f)\n"
    "\tprintf(\"ok sum=%ld t=%lu argc=%d\\n\", g->sum, t, argc);\n"
    "\t(void)argv;\n\tG_FREE(g);\n\tMAIN_END\n}\n";

static const char globals_c[] =
    "#include <stdio.h>\n#include <stdint.h>\n"
    "extern char __data_start[], __earth_rt_data_start[],\n"
    "\t__bss_start[], __earth_rt_bss_start[];\n"
    "int in_data = 7, in_bss;\n"
    "int main(void)\n{\n"
    "\tuintptr_t d = (uintptr_t)&in_data, b = (uintptr_t)&in_bss;\n"
    "\tint ok = d >= (uintptr_t)__data_start &&\n"
    "\t\t d < (uintptr_t)__earth_rt_data_start &&\n"
    "\t\t b >= (uintptr_t)__bss_start &&\n"
    "\t\t b < (uintptr_t)__earth_rt_bss_start;\n"
    "\tprintf(\"globals %s\\n\", ok ? \"apart\" : \"mixed\");\n"
    "\treturn !ok;\n}\n";

#define SPLASH_FLAGS "-pthread -std=c11 -D_XOPEN_SOURCE=500 -O2 -g -w"

Test(earthcc, parmacs, .init = setup, .fini = teardown)
{
	int rc = ecc("--showme:parmacs");
	cr_assert_eq(rc, 0, "%s", out);
	char m4file[PATH_MAX];
	snprintf(m4file, sizeof m4file, "%.*s", (int)strcspn(out, "\n"), out);
	cr_expect(strstr(m4file, "earth_parmacs.m4") && m4file[0] == '/',
		  "--showme:parmacs: %s", m4file);
	struct stat st;
	cr_assert_eq(stat(m4file, &st), 0, "%s: no such file", m4file);

	rc = ecc("--showme:link");
	cr_expect(rc == 0 && strstr(out, "-Wl,-T,") &&
		      strstr(out, "earth_dsm.ld"),
		  "--showme:link lacks the linker script: %s", out);
	rc = ecc("--showme -O2 util.c -o prog"); /* printed as %q quotes */
	cr_expect(rc == 0 && strstr(out, "-T\\,") &&
		      strstr(out, "earth_dsm.ld"),
		  "the link lacks the linker script: %s", out);

	/* a PARMACS program: m4, then a plain C compile with SPLASH's flags */
	put("p.c.in", parmacs_c_in);
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof cmd, "m4 '%s' p.c.in > p.c", m4file);
	rc = in_dir(cmd);
	cr_assert_eq(rc, 0, "m4: %s", out);
	rc = ecc(SPLASH_FLAGS " -Wall -Wextra -Werror -w -c p.c");
	cr_expect_eq(rc, 0, "a PARMACS program does not compile: %s", out);
	cr_expect(exists("p.o"), "no p.o");
	rc = ecc("-pthread -std=c11 -D_XOPEN_SOURCE=500 -O2 -Wall -Wextra "
		 "-Werror -c p.c -o p_warn.o");
	cr_expect_eq(rc, 0, "the macros' code warns: %s", out);

	/* the linker script on a plain C program with SPLASH's link flags */
	put("globals.c", globals_c);
	rc = ecc(SPLASH_FLAGS " globals.c -o globals -lm -lpthread");
	cr_assert_eq(rc, 0, "%s", out);
	rc = in_dir("timeout 60 ./globals");
	cr_expect(rc == 0 && strstr(out, "globals apart"), "%s", out);
}
