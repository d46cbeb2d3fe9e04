// The entrant's rating history: mu game by game with the band mu ± 3 sigma (uPlot, shipped in
// static/vendor). The data is the page's <script type="application/json" id="history-data">.
"use strict";

(() => {
  const holder = document.getElementById("chart");
  const source = document.getElementById("history-data");
  if (!holder || !source || typeof uPlot === "undefined") return;
  const history = JSON.parse(source.textContent);
  if (!history.length) {
    holder.textContent = "No rated game on this board yet.";
    return;
  }
  const x = [0];
  const mu = [history[0].mu_before];
  const low = [history[0].mu_before - 3 * history[0].sigma_before];
  const high = [history[0].mu_before + 3 * history[0].sigma_before];
  history.forEach((h) => {
    x.push(h.n);
    mu.push(h.mu);
    low.push(h.mu - 3 * h.sigma);
    high.push(h.mu + 3 * h.sigma);
  });
  const gameIds = new Map(history.map((h) => [h.n, h.game_id]));
  const fixed = (v) => (v === null || v === undefined ? "" : v.toFixed(2));
  // Away from the chart (and before any hover) the legend shows the latest game's values, not blanks.
  const last = x.length - 1;
  const shown = (format) => (u, v, series, idx) =>
    format(idx === null || idx === undefined ? u.data[series][last] : v);
  const size = () => ({ width: Math.max(320, holder.clientWidth), height: 320 });
  const options = {
    ...size(),
    scales: { x: { time: false } },
    axes: [{ label: "rated games", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000] }, { label: "rating" }],
    series: [
      { label: "game", value: shown((v) => (v === null ? "" : `${v}${gameIds.has(v) ? ` (game ${gameIds.get(v)})` : " (start)"}`)) },
      { label: "mu", stroke: "#1f5fa8", width: 2, value: shown(fixed) },
      { label: "mu − 3σ", stroke: "#8fb3dd", width: 1, value: shown(fixed) },
      { label: "mu + 3σ", stroke: "#8fb3dd", width: 1, value: shown(fixed) },
    ],
    bands: [{ series: [3, 2], fill: "rgba(31, 95, 168, 0.12)" }],
    cursor: { drag: { x: true, y: false } },
  };
  const plot = new uPlot(options, [x, mu, low, high], holder);
  holder.dataset.rendered = "true";
  holder.title = `mu ${fixed(mu[mu.length - 1])} after ${x[x.length - 1]} rated games`;
  window.addEventListener("resize", () => plot.setSize(size()));
})();
