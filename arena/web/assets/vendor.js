// Copies the built chart library from node_modules into arena/web/static/vendor, where it is committed
// and shipped with the Python package (no page loads anything from another host).
// Run after `npm ci`: npm run vendor
const fs = require("fs");
const path = require("path");

const out = path.join(__dirname, "..", "static", "vendor");
const files = [
  ["uplot/dist/uPlot.iife.min.js", "uPlot.iife.min.js"],
  ["uplot/dist/uPlot.min.css", "uPlot.min.css"],
  ["uplot/LICENSE", "uPlot.LICENSE.txt"],
];
fs.mkdirSync(out, { recursive: true });
for (const [from, to] of files) {
  fs.copyFileSync(path.join(__dirname, "node_modules", from), path.join(out, to));
  console.log(`copied ${from} -> static/vendor/${to}`);
}
