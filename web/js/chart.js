// The rating history as an inline SVG line chart: `chartGeometry` (pure: the numbers to draw,
// tested in web/test/chart.test.js) and `chartView` (the SVG of that geometry). x is the
// match number in the season, y the conservative rating after each match, with mu as a
// lighter line above it; each point is a link to its match, titled with the change.
import { html, nothing, svg } from "./vendor/lit-html.js";
import { changeText } from "./rating.js";

// Sizes in SVG units; a phone gets a narrower drawing so that its labels stay legible.
export const WIDE = { width: 640, height: 240, left: 46, right: 14, top: 14, bottom: 38 };
export const NARROW = { width: 340, height: 210, left: 40, right: 10, top: 12, bottom: 36 };

/** The step of about `count` even ticks over `span`: 1, 2 or 5 times a power of ten. */
export function niceStep(span, count) {
  const raw = Math.max(span, 1e-9) / Math.max(1, count);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * magnitude).find((step) => step >= raw * (1 - 1e-9));
}

/** The multiples of `step` from `low` to `high` (both included when they are multiples). */
export function ticksBetween(low, high, step) {
  const out = [];
  for (let k = Math.ceil(low / step - 1e-9); k * step <= high + step * 1e-9; k++) {
    out.push(Math.round(k * step * 1e6) / 1e6 || 0); // never a -0 label
  }
  return out;
}

const round = (v) => Math.round(v * 10) / 10;

/** What to draw for `history` (rating changes oldest first: `rating_after`, `mu_after`,
 * `rating_before`, `match`) in a box of `size`: the points (`number`: the match's place in
 * the season, from 1; `x`, `y` of the rating, `muY` of mu), both lines as SVG paths, the
 * ticks of both axes, and the value range. Null for an empty history. */
export function chartGeometry(history, size = WIDE) {
  const n = history.length;
  if (n === 0) return null;
  const values = history.flatMap((c) => [c.rating_after, c.mu_after]);
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi - lo < 1) {
    const middle = (hi + lo) / 2; // a flat history still gets an axis a point wide
    lo = middle - 0.5;
    hi = middle + 0.5;
  }
  const margin = (hi - lo) * 0.04; // no point on the frame's edge
  lo -= margin;
  hi += margin;
  const yStep = niceStep(hi - lo, 4);
  lo = Math.floor(lo / yStep) * yStep;
  hi = Math.ceil(hi / yStep) * yStep;
  const plot = { left: size.left, top: size.top, right: size.width - size.right, bottom: size.height - size.bottom };
  const plotWidth = plot.right - plot.left;
  const x = (number) => round(n === 1 ? plot.left + plotWidth / 2 : plot.left + ((number - 1) * plotWidth) / (n - 1));
  const y = (value) => round(plot.top + ((hi - value) / (hi - lo)) * (plot.bottom - plot.top));
  const points = history.map((c, i) => ({
    number: i + 1,
    match: c.match,
    x: x(i + 1),
    y: y(c.rating_after),
    muY: y(c.mu_after),
    before: c.rating_before,
    after: c.rating_after,
  }));
  const path = (key) => points.map((p, i) => `${i ? "L" : "M"}${p.x} ${p[key]}`).join(" ");
  const xStep = Math.max(1, Math.round(niceStep(Math.max(1, n - 1), size === NARROW ? 3 : 6)));
  const xValues = ticksBetween(1, n, xStep).filter((v) => v >= 1);
  if (xValues[0] !== 1) xValues.unshift(1);
  return {
    size,
    plot,
    lo,
    hi,
    points,
    line: path("y"),
    muLine: path("muY"),
    yTicks: ticksBetween(lo, hi, yStep).map((value) => ({ value, y: y(value) })),
    xTicks: xValues.map((value) => ({ value, x: x(value) })),
  };
}

/** The chart of `history` with its title and description for screen readers (`labels`:
 * `{id, title, desc, point(p), rating, mu, matchAxis}`), or nothing for an empty history. */
export function chartView(lang, history, labels, size = WIDE) {
  const g = chartGeometry(history, size);
  if (!g) return nothing;
  const { plot } = g;
  const number = (v) => new Intl.NumberFormat(lang === "zh" ? "zh-CN" : "en-US", { maximumFractionDigits: 1 }).format(v);
  return html`<figure class="rating-chart">
    <svg viewBox="0 0 ${g.size.width} ${g.size.height}" aria-labelledby="${labels.id}-title" aria-describedby="${labels.id}-desc">
      <title id="${labels.id}-title">${labels.title}</title>
      <desc id="${labels.id}-desc">${labels.desc}</desc>
      ${g.yTicks.map((t) => svg`<line class="grid" x1=${plot.left} x2=${plot.right} y1=${t.y} y2=${t.y}></line>
        <text class="tick" x=${plot.left - 6} y=${t.y} text-anchor="end" dominant-baseline="middle">${number(t.value)}</text>`)}
      ${g.xTicks.map((t) => svg`<text class="tick" x=${t.x} y=${plot.bottom + 14} text-anchor="middle">${t.value}</text>`)}
      <line class="axis" x1=${plot.left} x2=${plot.right} y1=${plot.bottom} y2=${plot.bottom}></line>
      <text class="axis-title" x=${(plot.left + plot.right) / 2} y=${g.size.height - 4} text-anchor="middle">${labels.matchAxis}</text>
      <path class="mu-line" d=${g.muLine}></path>
      <path class="rating-line" d=${g.line}></path>
      ${g.points.map((p) => svg`<a class="point" href="#/match/${p.match}">
        <title>${labels.point(p, changeText(lang, p.before, p.after))}</title>
        <circle class="hit" cx=${p.x} cy=${p.y} r="11"></circle>
        <circle class="dot" cx=${p.x} cy=${p.y} r="3.5"></circle></a>`)}
    </svg>
    <figcaption class="chart-legend">
      <span class="key key-rating" aria-hidden="true"></span>${labels.rating}
      <span class="key key-mu" aria-hidden="true"></span>${labels.mu}
    </figcaption>
  </figure>`;
}
