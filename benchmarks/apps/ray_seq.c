/* SPDX-License-Identifier: MIT */
/*
 * ray_seq.c - the sequential twin of ray.tc: renders row after row.
 *   ray_seq [w h [out.ppm]]   (default 256 256)
 */
#include "apps.h"
#include "ray.h"

static unsigned char img[RAY_MAXW * RAY_MAXH * 3];

int main(int argc, char **argv)
{
	int w, h;
	if (apps_arg_max(argc, argv, 3, "ray_seq [w h [out.ppm]]") ||
	    ray_args(argc, argv, &w, &h))
		return 2;
	double t0 = apps_now_ms();
	for (int j = 0; j < h; j++)
		ray_row(w, h, j, img + (size_t)j * w * 3);
	double ms = apps_now_ms() - t0;
	ray_answer(w, h, img);
	if (argc > 3 && ray_write_ppm(argv[3], w, h, img))
		return 2;
	return apps_verdict(ms, 1, "the reference render itself");
}
