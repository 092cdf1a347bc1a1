/* SPDX-License-Identifier: MIT */
/*
 * proof.c - the job secret and the HMAC-SHA-256 proofs keyed with it
 * (libsodium), for every transport that authenticates its peers (see
 * proof.h).
 */
#define EARTH_INTERNAL 1
#include "net/proof.h"
#include "base/settings.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

const char *net_secret_parse(uint8_t *key, uint32_t *len, const char *transport)
{
	static char msg[200];
	if (sodium_init() < 0)
		return "libsodium cannot start";
	const char *s = earth_setting_str(EARTH_SET_JOB_SECRET);
	if (!s || !*s) {
		snprintf(msg, sizeof(msg),
			 "EARTH_JOB_SECRET is not set: the %s transport needs "
			 "a random job secret (hex, at least 16 bytes; "
			 "earthrun --transport %s makes one)",
			 transport, transport);
		return msg;
	}
	size_t n = strlen(s);
	if (n % 2 || n < 2 * NET_SECRET_MIN || n > 2 * NET_SECRET_MAX)
		return "EARTH_JOB_SECRET must be 32 to 128 hex digits (16 to "
		       "64 bytes)";
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return "EARTH_JOB_SECRET must be 32 to 128 hex digits "
			       "(16 to 64 bytes)";
		key[i] = (uint8_t)(hi << 4 | lo);
	}
	*len = (uint32_t)(n / 2);
	return NULL;
}

void net_proof_mac(uint8_t mac[NET_MAC_LEN], const uint8_t *key, size_t key_len,
		   const char *label, const void *a, size_t alen, const void *b,
		   size_t blen)
{
	crypto_auth_hmacsha256_state st;
	crypto_auth_hmacsha256_init(&st, key, key_len);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label,
				      strlen(label) + 1);
	crypto_auth_hmacsha256_update(&st, a, alen);
	if (blen)
		crypto_auth_hmacsha256_update(&st, b, blen);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
}

bool net_proof_equal(const uint8_t *mac, const uint8_t *want)
{
	return sodium_memcmp(want, mac, NET_MAC_LEN) == 0;
}

void net_random(void *buf, size_t len)
{
	randombytes_buf(buf, len);
}

void net_forget(void *buf, size_t len)
{
	sodium_memzero(buf, len);
}
