#!/usr/bin/env bash
# Regenerates the pictures the README shows (docs/images/) from the bundled scenes:
# one final.png per scene (scenes/*.toml; the benchmark bars in scenes/bench/ are left out),
# the bar's animation, the bar coloured by displacement, and the volume plot of the
# linear vs corotational bars and of the four Müller bars, the Hauth force errors. Deterministic: the same binary gives the same files.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p supple-cli -p supple-lab
bin=target/release/supple
lab=target/release/supple-lab
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p docs/images
for scene in scenes/*.toml; do
  name=$(basename "$scene" .toml)
  "$bin" run --quiet --out "$out/$name" "$scene"
  cp "$out/$name/final.png" "docs/images/${name}_final.png"
done
cp "$out/bar/animation.gif" docs/images/bar_animation.gif
cp "$out/bars_linear_vs_corotational/plots/volume.png" docs/images/bars_volume.png
cp "$out/bar/plots/energy.png" docs/images/bar_energy.png
cp "$out/mueller_bars/plots/volume.png" docs/images/mueller_bars_volume.png
"$lab" hauth-forces --quiet --out "$out/hauth_forces"
cp "$out/hauth_forces/forces.png" docs/images/hauth_forces.png
for name in self_fold tube_drop; do
  "$bin" run --quiet --duration 0.5 --out "$out/${name}_0.5" "scenes/$name.toml"
  cp "$out/${name}_0.5/final.png" "docs/images/${name}_0.5s.png"
done
"$bin" render --quiet --color displacement --gif false --no-plots "$out/bar"
cp "$out/bar/final.png" docs/images/bar_displacement.png
ls -l docs/images
