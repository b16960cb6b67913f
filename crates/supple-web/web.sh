#!/usr/bin/env bash
# Supple in the browser.
#   bash crates/supple-web/web.sh build         # the wasm and the bundled scenes into www/pkg/
#   bash crates/supple-web/web.sh serve [PORT]  # build, then serve www/ on http://127.0.0.1:PORT/ (8017)
#   bash crates/supple-web/web.sh test          # build, native reference runs, then the Playwright
#                                               # test in Debian's chromium (artifacts: out/browser/)
# Needs the wasm32-unknown-unknown target (added here with rustup when missing); the test needs
# /usr/bin/chromium (Debian's `chromium`) and `npm ci` in browser-test/ (done here when missing).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"

build() {
  rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown \
    || rustup target add wasm32-unknown-unknown
  (cd "$root" && cargo build -p supple-web --target wasm32-unknown-unknown --release)
  local pkg="$here/www/pkg"
  rm -rf "$pkg"
  mkdir -p "$pkg/scenes/meshes"
  python3 "$here/strip_wasm.py" "$target/wasm32-unknown-unknown/release/supple_web.wasm" "$pkg/supple_web.wasm"
  cp "$root"/scenes/{bar,tube_drop,tube_obstacles,head_on,bunny_drop}.toml "$pkg/scenes/"
  cp "$root"/scenes/meshes/tube_solid_1k.{node,ele} "$root"/scenes/meshes/bunny.obj "$pkg/scenes/meshes/"
  echo "built $pkg/supple_web.wasm ($(wc -c < "$pkg/supple_web.wasm") bytes)"
}

case "${1:-serve}" in
  build) build ;;
  serve)
    build
    exec python3 "$here/serve.py" "${2:-8017}" "$here/www"
    ;;
  test)
    build
    [ -d "$here/browser-test/node_modules/playwright-core" ] \
      || (cd "$here/browser-test" && npm ci --no-audit --no-fund)
    log="$(mktemp)"
    python3 "$here/serve.py" 0 "$here/www" > "$log" 2>&1 &
    server=$!
    trap 'kill "$server" 2>/dev/null || true; rm -f "$log"' EXIT
    for _ in $(seq 100); do
      grep -q '^serving' "$log" && break
      sleep 0.1
    done
    url="$(sed -n 's/^serving //p' "$log")"
    [ -n "$url" ] || { echo "the static server did not start:"; cat "$log"; exit 1; }
    out="$root/out/browser"
    rm -rf "$out"
    mkdir -p "$out"
    # The native references for the same-positions check: `supple run` of the scenes the test
    # steps in the page (40 steps of the bar, 30 of the tube), last frame as JSON.
    (cd "$root" && cargo build --release -p supple-cli -p supple-web --example vtu_positions)
    for run in bar:0.4 tube_drop:0.3; do
      name="${run%%:*}"
      "$target/release/supple" run "$root/scenes/$name.toml" --out "$out/native-$name" \
        --duration "${run#*:}" --quiet
      "$target/release/examples/vtu_positions" "$out/native-$name" > "$out/native-$name.json"
    done
    # Native speed on this machine, one thread (the page's wasm has one), for the report.
    # Exit 3 is a timing marked invalid (the bar's clamped end falls below half its rest
    # volume in 300 steps: `valid: false` and the reason in the JSON); it is the same scene
    # the page steps, so the report keeps it. Any other failure stops the test.
    for run in bar:300 tube_drop:150 bunny_drop:40; do
      rc=0
      "$target/release/supple" --threads 1 bench "$root/scenes/${run%%:*}.toml" \
        --steps "${run#*:}" --warmup 5 > "$out/native-bench-${run%%:*}.json" || rc=$?
      [ "$rc" = 0 ] || [ "$rc" = 3 ] || { echo "supple bench ${run%%:*} failed ($rc)"; exit 1; }
    done
    # The test also starts `supple view` itself (the program is passed, and the page folder).
    SUPPLE_BIN="$target/release/supple" SUPPLE_ROOT="$root" \
      timeout 400 node "$here/browser-test/test.mjs" "$url" "$out"
    ;;
  *) echo "usage: web.sh build | serve [PORT] | test" >&2; exit 2 ;;
esac
