#!/bin/bash
# Record the CLI's outputs on every sample fabric, or compare two such records.
#   bash benchmarks/cli_outputs.sh record OUTDIR     # info, info --json, solve, convert (GraphML, node-link),
#                                                    # solve --json, JSON/MSCCL export, simulate
#   bash benchmarks/cli_outputs.sh compare DIR_A DIR_B
# compare masks only wall-clock timings and the output folder's name. Used to show that a refactoring
# changes no output: record before, record after, compare.
set -u
cd "$(dirname "$0")/.."
case "${1:-}" in
record)
  out=$2; mkdir -p "$out"
  for f in sample_topologies/*.json; do
    b=$(basename "$f" .json)
    forestcoll info "$f" > "$out/$b.info" 2>&1
    forestcoll info --json "$f" > "$out/$b.info.json" 2>&1
    forestcoll solve "$f" > "$out/$b.solve" 2>&1
    forestcoll convert "$f" "$out/$b.graphml" > /dev/null 2>&1
    forestcoll convert "$f" "$out/$b.nodelink.json" > /dev/null 2>&1
  done
  for b in dgx_a100_2x mi250_1x ring_8; do
    forestcoll solve "sample_topologies/$b.json" --json > "$out/$b.solve.json" 2>&1
    forestcoll export "sample_topologies/$b.json" --format json -o "$out/$b.sched.json" > /dev/null 2>&1
    forestcoll export "sample_topologies/$b.json" --max-trees-per-root 1 -o "$out/$b.msccl.xml" > "$out/$b.export.log" 2>&1
    forestcoll simulate "sample_topologies/$b.json" -s 1M,1G > "$out/$b.sim" 2>&1
  done ;;
compare)
  norm() { sed -E -e "s#$2#OUT#g" -e '/phases:|total:|solve time|"(optimum|switch_removal|trees|paths|total|seconds|elapsed|solve_seconds)": [0-9.e-]+,?$/d' \
    -e '/^ *"timings": \{[^}]*\},?$/d' "$1"; }  # a one-line timings object (solve --json, export --format json)
  rc=0
  for f in $(cd "$2" && ls); do
    if ! diff <(norm "$2/$f" "$2") <(norm "$3/$f" "$3") > /dev/null; then echo "DIFF $f"; rc=1; fi
  done
  [ $rc = 0 ] && echo "all $(ls "$2" | wc -l) outputs identical (timings and output folder masked)"
  exit $rc ;;
*) sed -n 2,7p "$0"; exit 2 ;;
esac
