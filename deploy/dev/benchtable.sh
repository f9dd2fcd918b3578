#!/usr/bin/env bash
# Reads `go test -bench` output (several -count runs) and prints one markdown row per benchmark:
# the median, minimum and maximum time per operation, and allocations per operation.
set -euo pipefail
awk '
/^Benchmark/ && / ns\/op/ {
  name = $1; sub(/-[0-9]+$/, "", name)
  for (i = 2; i <= NF; i++) {
    if ($(i+1) == "ns/op") t[name] = t[name] " " $i
    if ($(i+1) == "allocs/op") a[name] = $i
  }
  if (!(name in seen)) { seen[name] = 1; order[++n] = name }
}
function fmt(ns) { return ns >= 1e6 ? sprintf("%.2f ms", ns / 1e6) : (ns >= 1e3 ? sprintf("%.1f µs", ns / 1e3) : sprintf("%d ns", ns)) }
END {
  print "| benchmark | median | min–max | allocs/op | runs |"
  print "|---|---:|---:|---:|---:|"
  for (k = 1; k <= n; k++) {
    name = order[k]; m = split(substr(t[name], 2), v, " ")
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] + 0 < v[i] + 0) { x = v[i]; v[i] = v[j]; v[j] = x }
    med = (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
    printf "| %s | %s | %s–%s | %s | %d |\n", name, fmt(med), fmt(v[1]), fmt(v[m]), a[name], m
  }
}'
