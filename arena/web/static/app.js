// Client-side sorting of tables marked "sortable": click a column's title to sort by it, again to
// reverse. Headers say data-type number (a cell's leading number; an empty cell sorts lowest) or
// text; a cell may give its sort key in data-value.
"use strict";

(() => {
  for (const table of document.querySelectorAll("table.sortable")) {
    const headers = table.querySelectorAll("thead th");
    headers.forEach((th, column) => {
      th.tabIndex = 0;
      th.classList.add("sort");
      th.title = "sort by this column";
      const sort = () => {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        const numeric = th.dataset.type === "number";
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        const key = (row) => {
          const cell = row.cells[column];
          const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent;
          if (!numeric) return raw.trim().toLowerCase();
          const value = parseFloat(raw);
          return Number.isNaN(value) ? -Infinity : value;
        };
        rows.sort((a, b) => {
          const x = key(a);
          const y = key(b);
          const order = x < y ? -1 : x > y ? 1 : 0;
          return ascending ? order : -order;
        });
        headers.forEach((h) => h.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        body.append(...rows);
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          sort();
        }
      });
    });
  }
})();
