/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dsm_fiber.c - fuzz_dsm.c with fibers' split-phase requests too
 * (earth_dsm_fiber.h; runtime/su/dsm_fiber.c): a request record with
 * r[1] & 0x80 is a fiber's acquisition of a range (mostly inside an
 * allocation), its release, a lock, unlock, barrier, flag, allocation or
 * free, each with a slot of the harness's. Beside fuzz_dsm's checks: a
 * slot fires once per request and only for one; an allocation's address
 * is a page of the region; and after every record each range a fiber
 * acquired and has not released allows its access (a held page is never
 * invalidated under it).
 *
 *   make fuzz-dsm_fiber  (tests/fuzz/module.mk; part of make test)
 */
#define FUZZ_FIBERS 1
#include "fuzz_dsm.c"
