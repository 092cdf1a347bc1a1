/* SPDX-License-Identifier: MIT */
/*
 * plot.h - plots are drawn by gnuplot scripts (a .gp file in the
 * benchmark's folder, copied beside the benchmark by make) from the CSV
 * files the benchmark wrote; without gnuplot (Debian gnuplot-nox, which `make
 * bench` installs) the benchmark says so and runs on.
 */
#ifndef EARTH_BENCH_PLOT_H
#define EARTH_BENCH_PLOT_H

/* 1 when gnuplot is on PATH. */
int bench_have_gnuplot(void);
/* Runs `gnuplot -e "VARS" SCRIPT` to draw the file `out` (removed first;
 * VARS sets the script's variables, e.g. "csv='a.csv'; out='a.svg'").
 * 0 when `out` came out; 1, after a message naming `who`, when not. */
int bench_gnuplot(const char *who, const char *script, const char *vars,
		  const char *out);

#endif /* EARTH_BENCH_PLOT_H */
