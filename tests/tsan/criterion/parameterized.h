/* SPDX-License-Identifier: MIT */
/*
 * criterion/parameterized.h - TSan-build stand-in for Criterion 2.4's
 * <criterion/parameterized.h>: ParameterizedTestParameters,
 * ParameterizedTest and cr_make_param_array. The runner calls the
 * parameter function once, before forking, and runs the test once per
 * parameter, each run in its own child and counted as one test, as
 * Criterion does. See tests/tsan/README.md.
 */
#ifndef CR_SHIM_PARAMETERIZED_H
#define CR_SHIM_PARAMETERIZED_H

#pragma GCC system_header

#include <criterion/criterion.h>

/* The parameter generator of test Suite::Name. */
#define ParameterizedTestParameters(Suite, Name)                               \
	static struct criterion_test_params CR_SHIM_ID_(params, Suite,         \
							Name)(void)

/*
 * Test Suite::Name, run once per parameter; Param declares the parameter,
 * a pointer to one array element ("struct rcase *c").
 */
#define ParameterizedTest(Param, Suite, Name, ...)                             \
	static struct criterion_test_params CR_SHIM_ID_(params, Suite,         \
							Name)(void);           \
	static void CR_SHIM_ID_(pfn, Suite, Name)(Param);                      \
	static void CR_SHIM_ID_(tramp, Suite, Name)(void *param)               \
	{                                                                      \
		CR_SHIM_ID_(pfn, Suite, Name)(param);                          \
	}                                                                      \
	CR_SHIM_RECORD_(Suite, Name,                                           \
			(.pfn = CR_SHIM_ID_(tramp, Suite, Name),               \
			 .params = CR_SHIM_ID_(params, Suite, Name)),          \
			__VA_ARGS__)                                           \
	static void CR_SHIM_ID_(pfn, Suite, Name)(Param)

#define CR_SHIM_FIRST_(A, ...) A

/* cr_make_param_array(Type, Array, Len[, Cleanup]) */
#define cr_make_param_array(Type, Array, Len, ...)                             \
	((struct criterion_test_params){                                       \
	    .size = sizeof(Type),                                              \
	    .params = (void *)(Array),                                         \
	    .length = (Len),                                                   \
	    .cleanup = CR_SHIM_FIRST_(__VA_ARGS__ __VA_OPT__(, ) 0, ),         \
	})

#endif /* CR_SHIM_PARAMETERIZED_H */
