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

// The games page's entrant filter: a search box offering the entrants whose names hold what is typed
// (at most 20, from /api/entrants), never a list of every entrant. Choosing one puts its id in the
// form; without this script the form sends the name and the page offers the matching entrants.
(() => {
  const box = document.getElementById("entrant-search");
  const options = document.getElementById("entrant-options");
  const chosen = document.getElementById("entrant-id");
  if (!box || !options || !chosen) return;
  let offered = new Map(); // an option's text -> its entrant id
  let asked = "";
  let timer = 0;
  const label = (e, names) => {
    const text = e.version ? `${e.name} (${e.version})` : e.name;
    return names.get(text) > 1 ? `${text} #${e.id}` : text;
  };
  const offer = async (text) => {
    asked = text;
    const response = await fetch(`/api/entrants?q=${encodeURIComponent(text)}&limit=20`);
    if (!response.ok || asked !== text) return;
    const found = (await response.json()).entrants;
    const names = new Map();
    for (const e of found) {
      const t = e.version ? `${e.name} (${e.version})` : e.name;
      names.set(t, (names.get(t) || 0) + 1);
    }
    offered = new Map(found.map((e) => [label(e, names), e.id]));
    options.replaceChildren(
      ...Array.from(offered.keys(), (text) => {
        const option = document.createElement("option");
        option.value = text;
        return option;
      }),
    );
    options.dataset.for = text; // what the offered entrants match (tests wait for it)
    pick();
  };
  const pick = () => {
    const id = offered.get(box.value);
    chosen.value = id === undefined ? "" : String(id);
  };
  box.addEventListener("input", () => {
    pick();
    const text = box.value.trim();
    clearTimeout(timer);
    if (text && !offered.has(box.value)) timer = setTimeout(() => offer(text), 150);
  });
})();
