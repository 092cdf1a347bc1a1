/* SPDX-License-Identifier: MIT */
/* A THREADED function defined (not only declared) in a header. */
THREADED helper(int n)
{
	END_FUNCTION();
}
