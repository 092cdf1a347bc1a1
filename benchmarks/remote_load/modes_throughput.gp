# modes_throughput.gp - remote loads per second with k loads outstanding,
# one line per node mode, from the modes_throughput.csv that remote_load
# writes (k,mode,loads_per_s,eu_busy_pct). Called by remote_load:
#   gnuplot -e "csv='docs/results/modes_throughput.csv';
#               out='docs/results/modes_throughput.svg'" modes_throughput.gp
set terminal svg size 640,400 dynamic font "sans,12"
# labels are names (single_irq), not enhanced-text markup
set termoption noenhanced
set output out
set datafile separator ","
set title "Remote loads per second with k outstanding (2 nodes, shm)"
set logscale x 2
set xrange [0.8:80]
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "64" 64)
set xlabel "k (loads outstanding)"
set ylabel "loads per second"
set format y "%.0fk"
set yrange [0:*]
set grid
set key top left
modes = "dual single_irq single_poll"
plot for [m in modes] sprintf("< awk -F, '$2==\"%s\" {print $1\",\"$3}' %s", m, csv) \
     using 1:($2/1000) with linespoints linewidth 2 title m
