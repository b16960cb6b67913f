#!/usr/bin/env bash
# Zhuang & Canny Tables 1–2 with today's orderings: fill (nnz(L) − nnz(tril A)) and numeric
# factor time per ordering on hexahedral vertex grids, then on tet meshes.
# Usage: scripts/order_study.sh [grids|meshes|all]   (default all). Prints Markdown.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p supple-cli
bin=target/release/supple
what=${1:-all}
table() { # args: label, supple order options...
  local label=$1; shift
  $bin order --json "$@" | python3 -c "
import json, sys
r = json.load(sys.stdin)
o = {x['name']: x for x in r['orderings']}
names = ['natural', 'random', 'amd', 'nd_grid', 'mnd', 'nd']
fill = lambda n: f\"{o[n]['fill']:,}\" if n in o else '–'
fact = lambda n: (f\"{o[n]['factor_ms']:.1f}\" if o[n]['factor_ms'] is not None else 'skipped') if n in o else '–'
best = min(o.values(), key=lambda x: x['fill'])['name']
print(f\"| $label | {r['n']:,} | \" + ' | '.join(fill(n) for n in names) + f\" | {best} | \" + ' / '.join(fact(n) for n in names) + ' |')
"
}
header() {
  echo "| mesh | dofs | fill natural | random | amd | nd_grid | mnd | nd | least fill | factor ms (same order) |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
}
if [ "$what" = grids ] || [ "$what" = all ]; then
  header
  for g in 4x4x4 5x5x5 6x6x6 6x7x7 7x7x7 7x7x8 7x8x8 8x8x8 8x8x9 8x9x9 9x9x9 9x9x10 9x10x10 10x10x10 10x10x11 10x11x11 11x11x11 11x11x12; do
    table "grid $g" --grid "$g"
  done
  echo
fi
if [ "$what" = meshes ] || [ "$what" = all ]; then
  header
  table "tet box 20×20×80 cells" --box 20x20x80 --max-gflop 3000 --repeat 1
  for m in bunny_5k bunny_50k dragon_5k torus_gmsh_5k; do
    table "$m" --mesh "../shared/meshes/$m"
  done
fi
