# ll7.gp - Figure 3 of the EARTH-MANNA paper from docs/results/ll7.csv:
# percent of the fetch-first communication overhead left, against the
# fiber size, one panel per loop length, one line per communication factor
# (the dashed line is the physical bound at x1). Called by the ll7
# benchmark:
#   gnuplot -e "csv='ll7.csv'; net='shm'; mode='dual'; ns='9900 1000000';
#               fs='1 16'; out='ll7-shm.svg'; term='svg'" ll7.gp
if (term eq 'svg') {
	set terminal svg size 1100,820 dynamic font "sans,11"
} else {
	set terminal pngcairo size 1100,820 font "sans,10"
}
# labels are names (shm_direct, shm_emu), not enhanced-text markup
set termoption noenhanced
set output out
set datafile separator ","
set logscale x
set xlabel "iterations per fiber (s)"
set ylabel "% of fetch-first overhead left"
set yrange [-5:120]
set grid
set key top left
rows = words(ns) > 2 ? 2 : 1
cols = words(ns) > 1 ? 2 : 1
set multiplot layout rows,cols title sprintf("Livermore Loop 7 latency hiding, %s transport, %s nodes (100%% = fetch everything first, 0%% = local data)", net, mode)
do for [n in ns] {
	set title sprintf("n = %s", n)
	plot for [f in fs] sprintf("< awk -F, '$1==\"%s\" && $2==\"%s\" && $3==%s && $4==%s {print $5\",\"$13}' %s", net, mode, n, f, csv) using 1:2 with linespoints title sprintf("x%s", f), \
	     sprintf("< awk -F, '$1==\"%s\" && $2==\"%s\" && $3==%s && $4==1 {print $5\",\"$14}' %s", net, mode, n, csv) using 1:2 with lines dashtype 2 lc rgb "black" title "bound x1"
}
unset multiplot
