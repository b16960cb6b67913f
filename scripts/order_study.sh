#!/usr/bin/env bash
# Zhuang & Canny Tables 1–2 with today's orderings, and the comparison with METIS (issue 5).
# Usage: scripts/order_study.sh [grids|meshes|metis|all]   (default all). Prints Markdown.
#   grids, meshes: fill (nnz(L) − nnz(tril A)) and numeric factor time per ordering, on
#                  hexahedral vertex grids, then on tet meshes.
#   metis:         nnz(L) of Supple's orderings against METIS's nested dissection
#                  (METIS_NodeND) on the same vertex graphs; no factorization. Builds
#                  supple-lab with `--features metis` (vendored METIS C source, ≈ 75 s).
# Honours CARGO_TARGET_DIR; meshes come from SUPPLE_MESH_DIR (default scenes/meshes, which
# holds only the small ones: make the others with scripts/make_meshes.py, which writes
# target/meshes/, then SUPPLE_MESH_DIR=target/meshes; scenes/meshes/README.md has the
# commands). A mesh that is not there gets a row saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
features=()
case $what in metis | all) features=(--features metis) ;; esac
cargo build --release -q -p supple-lab "${features[@]}"
bin=${CARGO_TARGET_DIR:-target}/release/supple-lab
meshes=${SUPPLE_MESH_DIR:-scenes/meshes}
missing() { # args: mesh name; true (and prints a row) when the mesh is not in $meshes
  [ -f "$meshes/$1.node" ] && return 1
  echo "| $1 | not in $meshes (set SUPPLE_MESH_DIR) |"
}
table() { # args: label, supple-lab order options...
  local label=$1; shift
  $bin order --json --orderings "$orderings" "$@" | python3 -c "
import json, sys
r = json.load(sys.stdin)
o = {x['name']: x for x in r['orderings']}
names = '$orderings'.split(',')
fill = lambda n: f\"{o[n]['fill']:,}\"
fact = lambda n: f\"{o[n]['factor_ms']:.1f}\" if o[n]['factor_ms'] is not None else 'skipped'
least = min(x['fill'] for x in o.values())
best = ' = '.join(n for n in names if o[n]['fill'] == least)
print(f\"| $label | {r['n']:,} | \" + ' | '.join(fill(n) for n in names) + f\" | {best} | \" + ' / '.join(fact(n) for n in names) + ' |')
"
}
header() { # args: orderings
  echo "| mesh | dofs | fill ${1//,/ | } | least fill | factor ms (same order) |"
  echo "|---|---|$(echo "$1" | sed 's/[^,]*/---|/g; s/,//g')---|---|"
}
metis_row() { # args: label, supple-lab order options...
  local label=$1; shift
  $bin order --json --max-gflop 0 --orderings "$orderings" "$@" | python3 -c "
import json, sys
r = json.load(sys.stdin)
o = {x['name']: x for x in r['orderings']}
names = '$orderings'.split(',')
cell = lambda n: f\"{o[n]['nnz_l']:,}\" if n in o else '–'
best = min((x for x in o.values() if x['name'] != 'metis'), key=lambda x: (x['nnz_l'], x['name'] != 'nd'))
m = o['metis']['nnz_l']
print(f\"| $label | {r['n']:,} | \" + ' | '.join(cell(n) for n in names)
      + f\" | {o['nd']['nnz_l'] / m:.3f} | {best['name']} {best['nnz_l'] / m:.3f} | {o['nd']['nnz_l'] / o['amd']['nnz_l']:.3f}\"
      + f\" | {o['nd']['order_ms']:.0f} / {o['metis']['order_ms']:.0f} |\")
"
}
if [ "$what" = grids ] || [ "$what" = all ]; then
  orderings=natural,random,amd,nd_grid,mnd,nd
  header $orderings
  for g in 4x4x4 5x5x5 6x6x6 6x7x7 7x7x7 7x7x8 7x8x8 8x8x8 8x8x9 8x9x9 9x9x9 9x9x10 9x10x10 10x10x10 10x10x11 10x11x11 11x11x11 11x11x12; do
    table "grid $g" --grid "$g"
  done
  echo
fi
if [ "$what" = meshes ] || [ "$what" = all ]; then
  orderings=natural,random,amd,mnd,nd_pure,nd
  header $orderings
  table "tet box 80×20×20 cells" --box 80x20x20 --max-gflop 3000 --repeat 1
  for m in bunny_5k bunny_50k dragon_5k dragon_50k torus_gmsh_5k; do
    missing "$m" || table "$m" --mesh "$meshes/$m"
  done
  echo
fi
if [ "$what" = metis ] || [ "$what" = all ]; then
  orderings=amd,mnd,nd_pure,nd,metis
  echo "| mesh | dofs | nnz(L) ${orderings//,/ | } | nd / metis | best Supple / metis | nd / amd | order ms nd / metis |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  for m in tube_solid_1k tube_hollow_1k torus_gmsh_5k bunny_5k dragon_5k bunny_50k dragon_50k; do
    missing "$m" || metis_row "$m" --mesh "$meshes/$m"
  done
  metis_row "tet box 80×20×20 cells" --box 80x20x20
  metis_row "tet box 46³ cells" --box 46x46x46
  echo
  orderings=amd,mnd,nd_grid,nd_pure,nd,metis
  echo "| grid | dofs | nnz(L) ${orderings//,/ | } | nd / metis | best Supple / metis | nd / amd | order ms nd / metis |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for g in 11x11x12 16x16x16 22x22x22 32x32x32; do
    metis_row "grid $g" --grid "$g"
  done
fi
