/* SPDX-License-Identifier: MIT */
/*
 * criterion/criterion.h - TSan-build stand-in for Criterion 2.4's
 * <criterion/criterion.h>. Criterion cannot start under ThreadSanitizer
 * (Snaipe/Criterion#274), so the TSan test binaries include this header
 * instead (-Itests/tsan) and link tests/tsan/runner.c instead of
 * -lcriterion. It implements only the subset the tests use: Test,
 * TestSuite, the old-style cr_assert_* / cr_expect_* macros, cr_fail,
 * cr_fatal, cr_skip_test, cr_log_*. See tests/tsan/README.md.
 */
#ifndef CR_SHIM_CRITERION_H
#define CR_SHIM_CRITERION_H

/*
 * Like the real header (installed in /usr/include), this is a system
 * header: warnings about the operators inside the assertion macros (say
 * -Wsign-compare in cr_assert_eq) are silenced the same way for both.
 */
#pragma GCC system_header

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- test and suite records ---- */

/* Options of Test(...) and TestSuite(...); the names are Criterion's. */
struct criterion_test_extra_data {
	int sentinel_;	    /* lets the option list be empty          */
	void (*init)(void); /* run before the test, in its child       */
	void (*fini)(void); /* run after it, also after a failure      */
	int signal;	    /* the test must die of this signal        */
	int exit_code;	    /* the test must exit with this code       */
	bool disabled;	    /* reported as skipped, not run            */
	const char *description;
	double timeout; /* seconds; 0: the suite's, then 60        */
	void *data;
};

/* What a ParameterizedTestParameters function returns. */
struct criterion_test_params {
	size_t size;   /* bytes per parameter          */
	void *params;  /* the array of parameters      */
	size_t length; /* number of parameters         */
	void (*cleanup)(struct criterion_test_params *);
};

/* One Test or ParameterizedTest; registered by a constructor. */
struct cr_shim_test {
	const char *suite;
	const char *name;
	const char *file;
	unsigned line;
	void (*fn)(void);	  /* plain test                     */
	void (*pfn)(void *param); /* parameterized test             */
	struct criterion_test_params (*params)(void);
	struct criterion_test_extra_data *data;
	struct cr_shim_test *next;
};

/* One TestSuite; registered by a constructor. */
struct cr_shim_suite {
	const char *name;
	struct criterion_test_extra_data *data;
	struct cr_shim_suite *next;
};

void cr_shim_register_test(struct cr_shim_test *t);
void cr_shim_register_suite(struct cr_shim_suite *s);

#define CR_SHIM_ID_(Kind, Suite, Name) cr_shim_##Kind##_##Suite##_##Name

/*
 * The options, record and registering constructor of test Suite::Name;
 * Fn is the record's function fields in parentheses.
 */
#define CR_SHIM_UNPAREN_(...) __VA_ARGS__
#define CR_SHIM_RECORD_(Suite, Name, Fn, ...)                                  \
	static struct criterion_test_extra_data CR_SHIM_ID_(                   \
	    xd, Suite, Name) = {.sentinel_ = 0, __VA_ARGS__};                  \
	static struct cr_shim_test CR_SHIM_ID_(t, Suite, Name) = {             \
	    .suite = #Suite,                                                   \
	    .name = #Name,                                                     \
	    .file = __FILE__,                                                  \
	    .line = __LINE__,                                                  \
	    CR_SHIM_UNPAREN_ Fn,                                               \
	    .data = &CR_SHIM_ID_(xd, Suite, Name),                             \
	};                                                                     \
	__attribute__((constructor)) static void CR_SHIM_ID_(reg, Suite,       \
							     Name)(void)       \
	{                                                                      \
		cr_shim_register_test(&CR_SHIM_ID_(t, Suite, Name));           \
	}

/* Defines and registers test Suite::Name; options as in Criterion. */
#define Test(Suite, Name, ...)                                                 \
	static void CR_SHIM_ID_(fn, Suite, Name)(void);                        \
	CR_SHIM_RECORD_(Suite, Name, (.fn = CR_SHIM_ID_(fn, Suite, Name)),     \
			__VA_ARGS__)                                           \
	static void CR_SHIM_ID_(fn, Suite, Name)(void)

/* Options shared by the tests of Suite (a test's own value wins). */
#define TestSuite(Suite, ...)                                                  \
	static struct criterion_test_extra_data cr_shim_suite_xd_##Suite = {   \
	    .sentinel_ = 0, __VA_ARGS__};                                      \
	static struct cr_shim_suite cr_shim_suite_##Suite = {                  \
	    .name = #Suite,                                                    \
	    .data = &cr_shim_suite_xd_##Suite,                                 \
	};                                                                     \
	__attribute__((constructor)) static void cr_shim_suite_reg_##Suite(    \
	    void)                                                              \
	{                                                                      \
		cr_shim_register_suite(&cr_shim_suite_##Suite);                \
	}                                                                      \
	struct cr_shim_suite_semicolon_##Suite

/* ---- assertions ---- */

/*
 * The optional message arguments are glued behind "\x01": the runner drops
 * that byte, and a lone "\x01" means "no message, use the default". The
 * escape is resolved before literals are concatenated, so "\x01" "f..."
 * stays two characters apart. Messages must be string literals, as in
 * Criterion.
 */
#define CR_SHIM_MSG_(...) "\x01" __VA_ARGS__

/* Fails the test: prints file:line: Assertion failed: msg, ends it. */
__attribute__((noreturn, format(printf, 4, 5))) void
cr_shim_abort_(const char *file, unsigned line, const char *dflt,
	       const char *fmt, ...);
/* Fails the test: prints the same, and the test goes on. */
__attribute__((format(printf, 4, 5))) void
cr_shim_expect_(const char *file, unsigned line, const char *dflt,
		const char *fmt, ...);
/* Ends the test as skipped. */
__attribute__((noreturn, format(printf, 1, 2))) void
cr_shim_skip_(const char *fmt, ...);

#define CR_SHIM_CHECK_(Kind, Cond, Dflt, ...)                                  \
	do {                                                                   \
		if (!(Cond))                                                   \
			cr_shim_##Kind##_(__FILE__, __LINE__, (Dflt),          \
					  CR_SHIM_MSG_(__VA_ARGS__));          \
	} while (0)

#define CR_SHIM_NOT_MET_ "The conditions for this assertion were not met."

#define cr_assert_fail(...)                                                    \
	cr_shim_abort_(__FILE__, __LINE__, CR_SHIM_NOT_MET_,                   \
		       CR_SHIM_MSG_(__VA_ARGS__))
#define cr_expect_fail(...)                                                    \
	cr_shim_expect_(__FILE__, __LINE__, CR_SHIM_NOT_MET_,                  \
			CR_SHIM_MSG_(__VA_ARGS__))
/* The <criterion/new/assert.h> spellings. */
#define cr_fatal(...) cr_assert_fail(__VA_ARGS__)
#define cr_fail(...) cr_expect_fail(__VA_ARGS__)

#define cr_skip_test(...) cr_shim_skip_(CR_SHIM_MSG_(__VA_ARGS__))
#define cr_skip(...) cr_skip_test(__VA_ARGS__)

/*
 * Kind is abort (cr_assert_*) or expect (cr_expect_*). The public macros
 * stringify their operands themselves (SA, SB...), so the default message
 * shows them as written, before macro expansion.
 */
#define CR_SHIM_OP_(Kind, Op, A, B, SA, SB, ...)                               \
	CR_SHIM_CHECK_(Kind, (A)Op(B),                                         \
		       "The expression (" SA ") " #Op " (" SB ") is false.",   \
		       __VA_ARGS__)
#define CR_SHIM_STR_(Kind, Op, A, B, SA, SB, ...)                              \
	CR_SHIM_CHECK_(Kind, strcmp((A), (B)) Op 0,                            \
		       "The expression (as strings) (" SA ") " #Op " (" SB     \
		       ") is false.",                                          \
		       __VA_ARGS__)
#define CR_SHIM_ARR_(Kind, Op, A, B, Size, SA, SB, SSize, ...)                 \
	CR_SHIM_CHECK_(Kind, memcmp((A), (B), (Size)) Op 0,                    \
		       "The expression (" SA ")[0 .. " SSize "] " #Op " (" SB  \
		       ")[0 .. " SSize "] is false.",                          \
		       __VA_ARGS__)
#define CR_SHIM_FEQ_(A, B, Eps) ((B) - (A) <= (Eps) && (A) - (B) <= (Eps))
#define CR_SHIM_FLOAT_(Kind, Neg, Op, A, B, Eps, SA, SB, SEps, ...)            \
	CR_SHIM_CHECK_(Kind, Neg CR_SHIM_FEQ_(A, B, Eps),                      \
		       "The expression (" SA ") " #Op " (" SB                  \
		       ") is false (epsilon " SEps ").",                       \
		       __VA_ARGS__)

#define cr_assert(Cond, ...)                                                   \
	CR_SHIM_CHECK_(abort, Cond, "The expression " #Cond " is false.",      \
		       __VA_ARGS__)
#define cr_expect(Cond, ...)                                                   \
	CR_SHIM_CHECK_(expect, Cond, "The expression " #Cond " is false.",     \
		       __VA_ARGS__)
#define cr_assert_not(Cond, ...)                                               \
	CR_SHIM_CHECK_(abort, !(Cond),                                         \
		       "The expression !(" #Cond ") is false.", __VA_ARGS__)
#define cr_expect_not(Cond, ...)                                               \
	CR_SHIM_CHECK_(expect, !(Cond),                                        \
		       "The expression !(" #Cond ") is false.", __VA_ARGS__)

#define cr_assert_eq(A, B, ...)                                                \
	CR_SHIM_OP_(abort, ==, A, B, #A, #B, __VA_ARGS__)
#define cr_expect_eq(A, B, ...)                                                \
	CR_SHIM_OP_(expect, ==, A, B, #A, #B, __VA_ARGS__)
#define cr_assert_neq(A, B, ...)                                               \
	CR_SHIM_OP_(abort, !=, A, B, #A, #B, __VA_ARGS__)
#define cr_expect_neq(A, B, ...)                                               \
	CR_SHIM_OP_(expect, !=, A, B, #A, #B, __VA_ARGS__)
#define cr_assert_lt(A, B, ...) CR_SHIM_OP_(abort, <, A, B, #A, #B, __VA_ARGS__)
#define cr_expect_lt(A, B, ...)                                                \
	CR_SHIM_OP_(expect, <, A, B, #A, #B, __VA_ARGS__)
#define cr_assert_leq(A, B, ...)                                               \
	CR_SHIM_OP_(abort, <=, A, B, #A, #B, __VA_ARGS__)
#define cr_expect_leq(A, B, ...)                                               \
	CR_SHIM_OP_(expect, <=, A, B, #A, #B, __VA_ARGS__)
#define cr_assert_gt(A, B, ...) CR_SHIM_OP_(abort, >, A, B, #A, #B, __VA_ARGS__)
#define cr_expect_gt(A, B, ...)                                                \
	CR_SHIM_OP_(expect, >, A, B, #A, #B, __VA_ARGS__)
#define cr_assert_geq(A, B, ...)                                               \
	CR_SHIM_OP_(abort, >=, A, B, #A, #B, __VA_ARGS__)
#define cr_expect_geq(A, B, ...)                                               \
	CR_SHIM_OP_(expect, >=, A, B, #A, #B, __VA_ARGS__)

#define cr_assert_null(V, ...)                                                 \
	CR_SHIM_OP_(abort, ==, V, NULL, #V, "NULL", __VA_ARGS__)
#define cr_expect_null(V, ...)                                                 \
	CR_SHIM_OP_(expect, ==, V, NULL, #V, "NULL", __VA_ARGS__)
#define cr_assert_not_null(V, ...)                                             \
	CR_SHIM_OP_(abort, !=, V, NULL, #V, "NULL", __VA_ARGS__)
#define cr_expect_not_null(V, ...)                                             \
	CR_SHIM_OP_(expect, !=, V, NULL, #V, "NULL", __VA_ARGS__)

#define cr_assert_str_eq(A, B, ...)                                            \
	CR_SHIM_STR_(abort, ==, A, B, #A, #B, __VA_ARGS__)
#define cr_expect_str_eq(A, B, ...)                                            \
	CR_SHIM_STR_(expect, ==, A, B, #A, #B, __VA_ARGS__)
#define cr_assert_str_neq(A, B, ...)                                           \
	CR_SHIM_STR_(abort, !=, A, B, #A, #B, __VA_ARGS__)
#define cr_expect_str_neq(A, B, ...)                                           \
	CR_SHIM_STR_(expect, !=, A, B, #A, #B, __VA_ARGS__)
#define cr_assert_str_empty(S, ...)                                            \
	CR_SHIM_STR_(abort, ==, S, "", #S, "\"\"", __VA_ARGS__)
#define cr_expect_str_empty(S, ...)                                            \
	CR_SHIM_STR_(expect, ==, S, "", #S, "\"\"", __VA_ARGS__)
#define cr_assert_str_not_empty(S, ...)                                        \
	CR_SHIM_STR_(abort, !=, S, "", #S, "\"\"", __VA_ARGS__)
#define cr_expect_str_not_empty(S, ...)                                        \
	CR_SHIM_STR_(expect, !=, S, "", #S, "\"\"", __VA_ARGS__)

/* Size is in bytes, as in Criterion. */
#define cr_assert_arr_eq(A, B, Size, ...)                                      \
	CR_SHIM_ARR_(abort, ==, A, B, Size, #A, #B, #Size, __VA_ARGS__)
#define cr_expect_arr_eq(A, B, Size, ...)                                      \
	CR_SHIM_ARR_(expect, ==, A, B, Size, #A, #B, #Size, __VA_ARGS__)
#define cr_assert_arr_neq(A, B, Size, ...)                                     \
	CR_SHIM_ARR_(abort, !=, A, B, Size, #A, #B, #Size, __VA_ARGS__)
#define cr_expect_arr_neq(A, B, Size, ...)                                     \
	CR_SHIM_ARR_(expect, !=, A, B, Size, #A, #B, #Size, __VA_ARGS__)

/* |A - B| <= Eps, computed as in Criterion (no libm). */
#define cr_assert_float_eq(A, B, Eps, ...)                                     \
	CR_SHIM_FLOAT_(abort, , ==, A, B, Eps, #A, #B, #Eps, __VA_ARGS__)
#define cr_expect_float_eq(A, B, Eps, ...)                                     \
	CR_SHIM_FLOAT_(expect, , ==, A, B, Eps, #A, #B, #Eps, __VA_ARGS__)
#define cr_assert_float_neq(A, B, Eps, ...)                                    \
	CR_SHIM_FLOAT_(abort, !, !=, A, B, Eps, #A, #B, #Eps, __VA_ARGS__)
#define cr_expect_float_neq(A, B, Eps, ...)                                    \
	CR_SHIM_FLOAT_(expect, !, !=, A, B, Eps, #A, #B, #Eps, __VA_ARGS__)

/* ---- logging ---- */

enum criterion_severity {
	CR_LOG_INFO,	/* "[----] msg", shown with --verbose only */
	CR_LOG_WARNING, /* "[WARN] msg"                            */
	CR_LOG_ERROR,	/* "[ERR ] msg"                            */
};

__attribute__((format(printf, 2, 3))) void
cr_log(enum criterion_severity severity, const char *msg, ...);

#define cr_log_info(...) cr_log(CR_LOG_INFO, __VA_ARGS__)
#define cr_log_warn(...) cr_log(CR_LOG_WARNING, __VA_ARGS__)
#define cr_log_error(...) cr_log(CR_LOG_ERROR, __VA_ARGS__)

/*
 * Criterion's cross-process allocator. Every test here runs in a fork()ed
 * child of the runner, which inherits the runner's heap, so plain malloc
 * is enough for parameters built before the fork.
 */
#define cr_malloc(Size) malloc(Size)
#define cr_calloc(N, Size) calloc((N), (Size))
#define cr_realloc(Ptr, Size) realloc((Ptr), (Size))
#define cr_free(Ptr) free(Ptr)

#endif /* CR_SHIM_CRITERION_H */
