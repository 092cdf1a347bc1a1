# modes_throughput.gp - remote loads per second with k loads outstanding,
# one line per node mode, from the modes_throughput.csv that remote_load
# writes (k,mode,loads_per_s,eu_busy_pct[,loads_per_s_min,loads_per_s_max]):
# points are medians over the jobs, bars the slowest and the fastest job
# (when the CSV has them and there was more than one job). Log-log: the
# figures span two decades. Called by remote_load:
#   gnuplot -e "csv='docs/results/modes_throughput.csv';
#               out='docs/results/modes_throughput.svg'; cond='...';
#               place='...'; reps=3" modes_throughput.gp
# cond (CPUs, threads, work per load), place (where the CPUs are) and reps
# may be left out.
if (!exists("cond")) cond = ""
if (!exists("place")) place = ""
if (!exists("reps")) reps = 0
if (!exists("term")) term = 'svg'
if (term eq 'svg') {
	set terminal svg size 1000,640 dynamic font "sans,12"
} else {
	set terminal pngcairo size 1000,640 font "sans,10"
}
# labels are names (single_irq), not enhanced-text markup
set termoption noenhanced
set output out
set datafile separator ","
caption = "Remote loads per second with k loads outstanding, 2 nodes over shm"
if (strlen(cond) > 0) { caption = caption . "\n" . cond }
if (strlen(place) > 0) { caption = caption . "\n" . place }
# CSVs from before loads_per_s_min and loads_per_s_max: no bars
spread = system(sprintf("awk -F, 'NR == 1 { print (NF >= 6) }' %s", csv)) + 0
caption = caption . (reps > 1 ? sprintf("\nPoints: median of %d jobs", reps) : "") . \
	(reps > 1 && spread ? "; bars: slowest to fastest job" : "")
set title caption font ",11"
set logscale x 2
set logscale y
set xrange [0.8:80]
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "64" 64)
set xlabel "k: remote loads outstanding on node 0 (k chains of load, then 1 us of work)"
set ylabel "loads per second (log scale)"
set format y "%.0s%c"
set yrange [*:*]
set autoscale yfix
set offsets 0, 0, graph 0.05, graph 0.22
set grid xtics ytics mytics lw 0.5 lc rgb "#dddddd", lw 0.5 lc rgb "#eeeeee"
set key bottom right Left reverse vertical font ",10" opaque
set bars 0.6
modes = "dual single_irq single_poll"
mname(m) = m eq 'dual' ? "dual: EU and SU on threads of their own (the EARTH node)" : \
	   m eq 'single_irq' ? "single_irq: one thread; requests are served in a signal handler" : \
	   m eq 'single_poll' ? "single_poll: one thread; the EU polls the network between fibers" : m
mc(i) = i == 1 ? "#1f77b4" : i == 2 ? "#d62728" : "#2ca02c"
rows(m) = sprintf("< awk -F, 'NR > 1 && $2==\"%s\" {print $1\",\"$3\",\"(NF >= 6 ? $5 : $3)\",\"(NF >= 6 ? $6 : $3)}' %s", m, csv)
plot for [i = 1:words(modes)] rows(word(modes, i)) \
     using 1:2:3:4 with yerrorlines linewidth 2 pt 7 ps 0.8 lc rgb mc(i) \
     title mname(word(modes, i))
