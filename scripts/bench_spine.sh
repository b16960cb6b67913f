#!/usr/bin/env bash
# The spine issue's performance study: the three benchmark bars, linear vs corotational,
# warm starts and preconditioners, 1 and 2 threads. Prints a Markdown table (medians).
# Usage: scripts/bench_spine.sh [bar sizes...]   (default: 450 20k 160k)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p supple-cli
bin=target/release/supple
sizes=("${@:-450 20k 160k}")
[ $# -eq 0 ] && sizes=(450 20k 160k)
echo "| bar | model | precond | warm start | threads | ms/step median | min | forces | assembly | solve | CG its mean | SpMV ms | SpMV GB/s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for size in "${sizes[@]}"; do
  case $size in
    450) steps=200; warm=10 ;;
    20k) steps=50; warm=5 ;;
    *) steps=10; warm=3 ;;
  esac
  while read -r model pc ws threads; do
    $bin --threads "$threads" bench "scenes/bench/bar_$size.toml" --steps "$steps" --warmup "$warm" \
      --model "$model" --preconditioner "$pc" --warm-start "$ws" |
      python3 -c "
import json, sys
r = json.load(sys.stdin); w = r['wall_ms_per_step']; p = r['phases_ms_median']; s = r['spmv'][0]
print(f\"| $size ({r['bodies'][0]['tets']} tets) | $model | $pc | $ws | $threads | {w['median']:.3f} | {w['min']:.3f} | {p['forces']:.3f} | {p['assembly']:.3f} | {p['solve']:.3f} | {r['solver_iterations']['mean']:.1f} | {s['ms_median']:.3f} | {s['gb_per_s']:.1f} |\")
"
  done <<'VARIANTS'
linear block-jacobi extrapolate 1
corotational block-jacobi extrapolate 1
corotational block-jacobi velocity 1
corotational block-jacobi zero 1
corotational block-ssor extrapolate 1
corotational block-jacobi extrapolate 2
VARIANTS
done
