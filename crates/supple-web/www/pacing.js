// What the overlay and the colour bar show, kept honest and stable.
//
// RealTime: the real-time factor of what the page shows: the simulated time of the frames
// drawn over the wall time between them, over the last WINDOW_MS (not the worker's step
// capacity: a page that draws 10 frames a second of one step each at dt = 10 ms shows 0.1×
// real time, whatever the step costs). Frames drawn while paused or stopped are not counted,
// and a simulated time that goes back (a reset, a restart) starts the measure again.
//
// ColorRange: the colour bar's range for a field: from 0 (displacement, von Mises) or around 1
// (volume ratio) to a "nice" bound (1, 2 or 5 × 10^k) of the largest value seen since the
// scene was loaded or reset; it only grows, so the colours of a body that has fallen do not
// saturate and the bar does not flicker from frame to frame.

export const WINDOW_MS = 2000;

export class RealTime {
  constructor() { this.clear(); }
  clear() { this.samples = []; }

  // A frame drawn at wall time `wallMs` showing simulated time `simS`; `running`: stepping.
  add(wallMs, simS, running) {
    const last = this.samples[this.samples.length - 1];
    if (!running || (last && simS < last.sim)) {
      this.clear();
      if (!running) return;
    }
    this.samples.push({ wall: wallMs, sim: simS });
    while (this.samples.length > 2 && wallMs - this.samples[1].wall >= WINDOW_MS) this.samples.shift();
  }

  // Simulated seconds per wall second over the window, or null with less than 0.5 s of it.
  factor() {
    const n = this.samples.length;
    if (n < 2) return null;
    const a = this.samples[0];
    const b = this.samples[n - 1];
    const wall = (b.wall - a.wall) / 1000;
    return wall >= 0.5 ? (b.sim - a.sim) / wall : null;
  }
}

// The smallest of 1, 2, 5 × 10^k at or above v (> 0).
export function nice(v) {
  const k = Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * 10 ** k >= v * (1 - 1e-12)) return m * 10 ** k;
  return 10 ** (k + 1);
}

// Smallest bound of each field's bar: 1 mm, 1 Pa, ±1 % volume.
const FLOOR = [1e-3, 1, 1e-2];

export class ColorRange {
  constructor() { this.clear(); }
  clear() { this.kind = 0; this.bound = 0; }

  // The values of field `kind` in a frame (field.rs: 0 displacement, 1 von Mises, 2 volume ratio).
  add(values, kind) {
    if (kind !== this.kind) {
      this.kind = kind;
      this.bound = 0;
    }
    let m = 0;
    for (const v of values) {
      const a = kind === 2 ? Math.abs(v - 1) : v;
      if (a > m && Number.isFinite(a)) m = a;
    }
    if (m > this.bound) this.bound = nice(Math.max(m, FLOOR[kind]));
  }

  // [lo, hi] of the bar.
  get range() {
    const b = this.bound || FLOOR[this.kind];
    return this.kind === 2 ? [1 - b, 1 + b] : [0, b];
  }
}

// The factor as the overlay prints it: two significant digits below 1 ("× 0.40"), two
// decimals above.
export function factorText(f) {
  return f >= 1 ? f.toFixed(2) : f.toPrecision(2);
}
