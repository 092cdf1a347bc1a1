/* SPDX-License-Identifier: MIT */
/*
 * stamp.c - the stamp table of stamp.h, in the -DEARTH_STAMPS build.
 */
#include "base/stamp.h"

#ifdef EARTH_STAMPS
uint64_t earth_stamp_t[STAMP_COUNT_];
#else
/* Keeps this translation unit non-empty in the normal build. */
typedef int earth_stamp_unused;
#endif
