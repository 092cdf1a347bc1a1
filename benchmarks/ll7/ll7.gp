# ll7.gp - Figure 3 of the EARTH-MANNA paper from ll7.csv: percent of the
# fetch-first communication overhead left, against the fiber size, one
# panel per loop length n, one colour per communication factor f (f = k:
# every chunk of Y is fetched k times, so the transfer is k times as long),
# the physical bound of each factor dashed in its colour, the 3 % and 5.8 %
# targets and the 100 % line. Points are medians, bars the fastest and the
# slowest repetition (pct_min, pct_max). The y axis is logarithmic from 1 %
# to the highest bar: a point at or below 1 % (0 or negative is possible:
# noise around the plain loop's time) is drawn on the 1 % line as an open
# triangle. Called by the ll7 benchmark:
#   gnuplot -e "csv='ll7.csv'; net='shm'; mode='dual'; ns='9900 1000000';
#               fs='1 16'; out='ll7-shm.svg'; term='svg'; cond='...'; place='...';
#               reps=3; short_n=20000; short_x=8" ll7.gp
# cond (the run's CPUs and threads), place (where the two CPUs are), reps,
# short_n and short_x may be left out.
if (!exists("cond")) cond = ""
if (!exists("place")) place = ""
if (!exists("reps")) reps = 0
if (!exists("short_n")) short_n = 20000
if (!exists("short_x")) short_x = 8
rows = words(ns) > 2 ? 2 : 1
cols = words(ns) > 1 ? 2 : 1
height = rows == 2 ? 1300 : 820
if (term eq 'svg') {
	set terminal svg size 1300,height dynamic font "sans,11"
} else {
	set terminal pngcairo size 1300,height font "sans,10"
}
# labels are names (shm_direct, shm_emu), not enhanced-text markup
set termoption noenhanced
set output out
set datafile separator ","

netname = net eq 'shm' ? "shm: Y in node 1's registered memory, every block move served by node 1's SU" : \
	  net eq 'shm_direct' ? "shm one-sided: node 0's SU reads Y from node 1's global memory, node 1 idle" : \
	  net eq 'shm_emu' ? "shm with an emulated network: 10 us added each way" : \
	  net eq 'tcp' ? "tcp over loopback: every block move served by node 1's SU" : net
modename = mode eq 'dual' ? "dual nodes (EU and SU on threads of their own)" : \
	   mode eq 'single-poll' ? "single-poll nodes (one thread: the EU polls the network between fibers)" : \
	   mode eq 'single-interrupt' ? "single-interrupt nodes (one thread: the network is served in a signal handler)" : mode

set logscale x
set format x "%.0f"
set format y "%.12g %%"
set xlabel "fiber size s (loop iterations per fiber; the loop is cut into n/s fibers)"
set ylabel "% of the fetch-first overhead left (log scale)"
set grid xtics ytics mxtics mytics lw 0.5 lc rgb "#dddddd", lw 0.5 lc rgb "#eeeeee"
set bars 0.6

# The rows of one (n, f): s, pct, pct_min, pct_max, bound (old CSVs
# without pct_min and pct_max: no bars).
rows_of(n, f) = sprintf("< awk -F, 'NR > 1 && $1==\"%s\" && $2==\"%s\" && $3==%s && $4==%s {print $5\",\"$13\",\"(NF >= 16 ? $15 : $13)\",\"(NF >= 16 ? $16 : $13)\",\"$14}' %s", net, mode, n, f, csv)
ftitle(f) = f + 0 == 1 ? "communication x1: each chunk of Y fetched once (the plain transfer)" : \
	sprintf("communication x%s: each chunk of Y fetched %s times, every transfer %s times as long", f, f, f)
fc(i) = i == 1 ? "#1f77b4" : i == 2 ? "#d62728" : i == 3 ? "#2ca02c" : i == 4 ? "#9467bd" : "#ff7f0e"

# Screen layout: the caption on top, the panels, one key for all of them
# at the bottom.
top_px = 110.0
key_px = 40.0 + 16 * (words(fs) + 5)
ptop = 1 - top_px / height
pbot = key_px / height
ph = (ptop - pbot) / rows

caption = "Livermore Loop 7 latency hiding (Figure 3 of EARTH-MANNA), " . modename . "\n" . netname
if (strlen(cond) > 0) { caption = caption . "\n" . cond }
if (strlen(place) > 0) { caption = caption . "\n" . place }
# CSVs from before pct_min and pct_max: no bars
spread = system(sprintf("awk -F, 'NR == 1 { print (NF >= 16) }' %s", csv)) + 0
caption = caption . "\n100 % = fetch all of Y first, then compute; 0 % = Y already local. Points: median" . \
	(spread ? "; bars: fastest to slowest repetition" : "")
set multiplot title caption font ",11"
unset key
panel = 0
do for [n in ns] {
	c = panel % cols
	rw = panel / cols
	panel = panel + 1
	set lmargin at screen (c == 0 ? 0.085 : 0.585)
	set rmargin at screen (c == 0 ? (cols == 1 ? 0.97 : 0.47) : 0.97)
	set tmargin at screen (ptop - rw * ph - 0.035)
	set bmargin at screen (ptop - (rw + 1) * ph + 0.07)
	# The y range: from the decade below the smallest positive bar or
	# bound (0.01 % at least, 1 % at most, so that the targets show) to
	# the highest bar; what lies below is drawn on the floor.
	# (stats keeps only the values inside the previous panel's ranges)
	unset logscale y
	set autoscale xy
	lo = 1.0
	do for [f in fs] {
		stats rows_of(n, f) using ($3 > 0 ? $3 : NaN) nooutput
		if (STATS_records > 0 && STATS_min < lo) {
			lo = STATS_min
		}
		stats rows_of(n, f) using ($5 > 0 ? $5 : NaN) nooutput
		if (STATS_records > 0 && STATS_min < lo) {
			lo = STATS_min
		}
	}
	yfloor = 10.0 ** floor(log10(lo))
	yfloor = yfloor < 0.01 ? 0.01 : yfloor
	set logscale y
	clamp(v) = v > yfloor ? v : yfloor
	low(v) = v > yfloor ? NaN : yfloor
	r = reps > 0 ? (n + 0 <= short_n ? reps * short_x : reps) : 0
	set title (r > 0 ? sprintf("n = %s (medians of %d runs per point)", n, r) : sprintf("n = %s", n))
	set xrange [0.7:(n + 0) * 1.5]
	set yrange [yfloor:*]
	plot for [i = 1:words(fs)] rows_of(n, word(fs, i)) using 1:(clamp($2)):(clamp($3)):(clamp($4)) \
		with yerrorlines lw 2 pt 7 ps 0.8 lc rgb fc(i), \
	     for [i = 1:words(fs)] rows_of(n, word(fs, i)) using 1:(low($2)) with points pt 8 ps 1.2 lc rgb fc(i), \
	     for [i = 1:words(fs)] rows_of(n, word(fs, i)) using 1:(clamp($5)) with lines dt 2 lw 1.5 lc rgb fc(i), \
	     100 with lines lw 1 lc rgb "#777777", \
	     5.8 with lines dt 4 lw 1.5 lc rgb "#8c564b", \
	     3 with lines dt 3 lw 2 lc rgb "#17becf"
}
# The key, alone below the panels.
unset title
unset border
unset tics
unset xlabel
unset ylabel
unset grid
unset logscale
set xrange [0:1]
set yrange [0:1]
set lmargin at screen 0.05
set rmargin at screen 0.95
set tmargin at screen pbot
set bmargin at screen 0.0
set key at screen 0.06, pbot - 0.01 left top Left reverse vertical maxrows (words(fs) + 5) samplen 3 font ",10" nobox
plot for [i = 1:words(fs)] NaN with linespoints lw 2 pt 7 ps 0.8 lc rgb fc(i) title ftitle(word(fs, i)), \
     NaN with lines dt 2 lw 1.5 lc rgb "black" title "dashed, in the colour of its factor: the physical bound = latency of the first chunk alone (no fiber computes before its data is here)", \
     NaN with lines lw 1 lc rgb "#777777" title "100 %: as slow as fetching everything first", \
     NaN with lines dt 4 lw 1.5 lc rgb "#8c564b" title "5.8 %: the 1995 optimum (EARTH-MANNA, n = 9900, s = 330)", \
     NaN with lines dt 3 lw 2 lc rgb "#17becf" title "3 %: the target at n = 10^6, x1", \
     NaN with points pt 8 ps 1.2 lc rgb "black" title "open triangle on the bottom line: a median at or below the axis floor (0 or negative: noise)"
unset multiplot
