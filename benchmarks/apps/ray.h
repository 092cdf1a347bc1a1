/* SPDX-License-Identifier: MIT */
/*
 * ray.h - a small ray tracer, shared by ray.tc and ray_seq.c: a fixed
 * scene of spheres over a checkered plane, one point light, shadows,
 * mirror reflections (3 bounces) and 2x2 supersampling. A pixel depends
 * only on its coordinates, so any split of the image renders the same
 * bytes as the sequential loop.
 */
#ifndef APPS_RAY_H
#define APPS_RAY_H

#include "apps.h"

#include <math.h>

#define RAY_MAXW 1024
#define RAY_MAXH 1024
#define RAY_DEPTH 3

struct ray_v {
	double x, y, z;
};

static inline struct ray_v rv(double x, double y, double z)
{
	return (struct ray_v){x, y, z};
}
static inline struct ray_v rv_add(struct ray_v a, struct ray_v b)
{
	return rv(a.x + b.x, a.y + b.y, a.z + b.z);
}
static inline struct ray_v rv_sub(struct ray_v a, struct ray_v b)
{
	return rv(a.x - b.x, a.y - b.y, a.z - b.z);
}
static inline struct ray_v rv_mul(struct ray_v a, double s)
{
	return rv(a.x * s, a.y * s, a.z * s);
}
static inline double rv_dot(struct ray_v a, struct ray_v b)
{
	return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline struct ray_v rv_norm(struct ray_v a)
{
	return rv_mul(a, 1.0 / sqrt(rv_dot(a, a)));
}

static const struct ray_sphere {
	double cx, cy, cz, r; /* centre, radius */
	double cr, cg, cb;    /* colour         */
	double refl;	      /* mirror part    */
} ray_spheres[] = {
    {0.0, 0.0, 3.0, 1.0, 0.9, 0.2, 0.2, 0.3},
    {-2.1, -0.3, 4.0, 0.7, 0.2, 0.9, 0.3, 0.5},
    {2.0, -0.4, 2.5, 0.6, 0.2, 0.3, 0.9, 0.2},
    {0.8, -0.75, 1.4, 0.25, 0.9, 0.9, 0.2, 0.6},
    {-0.9, 1.6, 5.0, 0.9, 0.8, 0.8, 0.8, 0.8},
};
#define RAY_NSPH (int)(sizeof ray_spheres / sizeof ray_spheres[0])
#define RAY_PLANE_Y (-1.0)

/* Nearest hit along o + t d (t > 1e-6): returns the object (sphere index,
 * RAY_NSPH for the plane, -1 for none) and its distance in *t. */
static inline int ray_hit(struct ray_v o, struct ray_v d, double *t)
{
	int best = -1;
	double tb = 1e30;
	for (int i = 0; i < RAY_NSPH; i++) {
		const struct ray_sphere *s = &ray_spheres[i];
		struct ray_v oc = rv_sub(o, rv(s->cx, s->cy, s->cz));
		double b = rv_dot(oc, d), c = rv_dot(oc, oc) - s->r * s->r;
		double disc = b * b - c;
		if (disc < 0)
			continue;
		double q = sqrt(disc), t0 = -b - q, t1 = -b + q;
		double th = t0 > 1e-6 ? t0 : t1;
		if (th > 1e-6 && th < tb)
			tb = th, best = i;
	}
	if (d.y < 0) {
		double tp = (RAY_PLANE_Y - o.y) / d.y;
		if (tp > 1e-6 && tp < tb)
			tb = tp, best = RAY_NSPH;
	}
	*t = tb;
	return best;
}

/* Colour seen along the unit direction d from o, into c[3]. */
static inline void ray_trace(struct ray_v o, struct ray_v d, int depth,
			     double c[3])
{
	const struct ray_v light = {5.0, 6.0, -3.0};
	double t;
	int obj = ray_hit(o, d, &t);
	if (obj < 0) {
		double sky = 0.5 + 0.5 * d.y;
		c[0] = 0.3 * sky, c[1] = 0.5 * sky, c[2] = 0.9 * sky;
		return;
	}
	struct ray_v p = rv_add(o, rv_mul(d, t)), n;
	double base[3], refl;
	if (obj == RAY_NSPH) {
		n = rv(0, 1, 0);
		int check = ((int)floor(p.x) + (int)floor(p.z)) & 1;
		base[0] = base[1] = base[2] = check ? 0.9 : 0.2;
		refl = 0.25;
	} else {
		const struct ray_sphere *s = &ray_spheres[obj];
		n = rv_norm(rv_sub(p, rv(s->cx, s->cy, s->cz)));
		base[0] = s->cr, base[1] = s->cg, base[2] = s->cb;
		refl = s->refl;
	}
	struct ray_v l = rv_sub(light, p);
	double dist = sqrt(rv_dot(l, l));
	l = rv_mul(l, 1.0 / dist);
	double diff = rv_dot(n, l), spec = 0, ts;
	if (diff < 0)
		diff = 0;
	int blocker = ray_hit(p, l, &ts);
	if (blocker >= 0 && ts < dist)
		diff = 0;
	else if (diff > 0) {
		struct ray_v h = rv_norm(rv_sub(l, d));
		double hn = rv_dot(h, n);
		spec = hn > 0 ? pow(hn, 40) : 0;
	}
	for (int k = 0; k < 3; k++)
		c[k] = base[k] * (0.1 + 0.9 * diff) + 0.5 * spec;
	if (depth > 0 && refl > 0) {
		struct ray_v r = rv_sub(d, rv_mul(n, 2 * rv_dot(d, n)));
		double rc[3];
		ray_trace(p, rv_norm(r), depth - 1, rc);
		for (int k = 0; k < 3; k++)
			c[k] = (1 - refl) * c[k] + refl * rc[k];
	}
}

/* Renders row j of a w x h image (2x2 samples per pixel) into px[3 w]. */
static inline void ray_row(int w, int h, int j, unsigned char *px)
{
	const struct ray_v eye = {0.0, 0.6, -3.0};
	double scale = 2.0 / h;
	for (int i = 0; i < w; i++) {
		double acc[3] = {0, 0, 0};
		for (int s = 0; s < 4; s++) {
			double u = (i + 0.25 + 0.5 * (s & 1) - 0.5 * w) * scale;
			double v =
			    (0.5 * h - j - 0.25 - 0.5 * (s >> 1)) * scale;
			double c[3];
			ray_trace(eye, rv_norm(rv(u, v - 0.2, 1.5)), RAY_DEPTH,
				  c);
			for (int k = 0; k < 3; k++)
				acc[k] += c[k];
		}
		for (int k = 0; k < 3; k++) {
			double v = acc[k] * 0.25;
			v = v < 0 ? 0 : v > 1 ? 1 : v;
			px[3 * i + k] = (unsigned char)(v * 255.0 + 0.5);
		}
	}
}

/* Reads w, h from argv[1..2]; 0 or -1. */
static inline int ray_args(int argc, char **argv, int *w, int *h)
{
	return apps_arg_int(argc, argv, 1, 256, 1, RAY_MAXW, "width", w) ||
		       apps_arg_int(argc, argv, 2, 256, 1, RAY_MAXH, "height",
				    h)
		   ? -1
		   : 0;
}

/* Prints the answer: the size and the FNV-1a hash of the RGB bytes. */
static inline void ray_answer(int w, int h, const unsigned char *img)
{
	apps_answer("ray(%dx%d): image hash %016llx", w, h,
		    (unsigned long long)apps_fnv(APPS_FNV_INIT, img,
						 (size_t)w * h * 3));
}

/* Writes img as a binary PPM to path; 0, or -1 after saying why. */
static inline int ray_write_ppm(const char *path, int w, int h,
				const unsigned char *img)
{
	FILE *f = fopen(path, "wb");
	if (!f || fprintf(f, "P6\n%d %d\n255\n", w, h) < 0 ||
	    fwrite(img, 3, (size_t)w * h, f) != (size_t)w * h) {
		fprintf(stderr, "ray: cannot write %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

#endif /* APPS_RAY_H */
