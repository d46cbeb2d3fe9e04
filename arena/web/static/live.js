// Following a running match: its public events arrive as server-sent events (/live/MATCH/events) and
// are drawn on the table as they come: the trick, the declared cards, the points announced. Only the
// public log reaches this page; the referee's result comes with the "end" event.
"use strict";

(() => {
  const root = document.getElementById("live");
  if (!root) return;
  const $ = (id) => document.getElementById(id);
  const match = JSON.parse($("match-data").textContent);
  const names = match.seat_names.slice();
  const CARD = "([789JQKTA][SHDC]\\.[1-4])";
  const RULES = [
    [new RegExp(`^deal (\\d+): seat (\\d+) deals(?:, turn-up ${CARD})?$`), onDeal],
    [new RegExp(`^seat (\\d+) plays ${CARD}$`), onPlay],
    [/^seat (\d+) wins trick (\d+)$/, onTrick],
    [/^seat (\d+) declares ([a-z-]+)((?: [789JQKTA][SHDC]\.[1-4])*) for (\d+)$/, onDeclare],
    [new RegExp(`^seat (\\d+) exchanges ${CARD} for the turn-up ${CARD}$`), onExchange],
    [new RegExp(`^seat (\\d+) draws the turn-up ${CARD}$`), onTurnUpDrawn],
    [/^seat (\d+) scores (\d+) for ([a-z-]+)$/, onScore],
    [/^seat (\d+) fixes trumps: ([SHDC])$/, onTrumps],
  ];
  let state = null;
  let game = -1;
  let final = null; // the referee's scores of the last game, once the match is over

  function fresh() {
    return { deal: 0, trump: null, turnUp: null, trick: [], lastTrick: [], seats: [] };
  }

  function seat(n) {
    while (state.seats.length <= n) state.seats.push({ table: [], deal: 0, total: 0, tricks: 0 });
    return state.seats[n];
  }

  function onDeal(m) {
    state.deal = parseInt(m[1], 10);
    state.trick = [];
    state.lastTrick = [];
    state.turnUp = m[3] || null;
    state.trump = m[3] ? m[3][1] : null;
    for (const s of state.seats) {
      s.table = [];
      s.deal = 0;
      s.tricks = 0;
    }
  }
  function onPlay(m) {
    const s = seat(+m[1]);
    s.table = s.table.filter((c) => c !== m[2]);
    state.trick.push([+m[1], m[2]]);
  }
  function onTrick(m) {
    seat(+m[1]).tricks += 1;
    state.lastTrick = state.trick;
    state.trick = [];
  }
  function onDeclare(m) {
    const s = seat(+m[1]);
    for (const c of m[3].trim().split(" ").filter(Boolean)) if (!s.table.includes(c)) s.table.push(c);
    s.deal += +m[4];
    s.total += +m[4];
  }
  function onExchange(m) {
    state.turnUp = m[2];
  }
  function onTurnUpDrawn() {
    state.turnUp = null;
  }
  function onScore(m) {
    const s = seat(+m[1]);
    s.deal += +m[2];
    s.total += +m[2];
  }
  function onTrumps(m) {
    state.trump = m[2];
  }

  function apply(text) {
    for (const [pattern, handler] of RULES) {
      const m = pattern.exec(text);
      if (m) {
        handler(m);
        return;
      }
    }
  }

  function render() {
    Cards.suit($("trump"), state.trump);
    Cards.fill($("turn-up"), state.turnUp ? [state.turnUp] : []);
    Cards.trick($("trick"), state.trick, names);
    Cards.trick($("last-trick"), state.lastTrick, names);
    for (let n = 0; n < names.length; n++) seat(n);
    $("seats").replaceChildren(
      ...state.seats.map((s, n) => {
        const box = Cards.el("div", "seat");
        box.id = `seat-${n}`;
        box.append(Cards.el("div", "seat-head", `seat ${n}: ${names[n] || ""}`));
        const score = Cards.el("span", "score-total", String(final ? final[n] : s.total));
        score.id = `score-${n}`;
        score.title = final ? "the referee's final score" : "points announced in the public log this game";
        const facts = Cards.el("div", "seat-facts");
        facts.append(score, Cards.el("span", "", ` points announced · this deal ${s.deal} · tricks ${s.tricks}`));
        box.append(facts);
        if (s.table.length) {
          const table = Cards.el("div", "cards declared");
          Cards.fill(table, s.table);
          box.append(Cards.el("div", "label", "declared, on the table"), table);
        }
        return box;
      }),
    );
    $("live-game").textContent = game >= 0 ? `game ${game + 1} of ${match.games} · deal ${state.deal}` : "";
  }

  // Events can come faster than frames: the table is drawn (and the log scrolled) once per frame.
  let drawing = false;
  function draw() {
    if (drawing) return;
    drawing = true;
    requestAnimationFrame(() => {
      drawing = false;
      render();
      const last = $("all-lines").lastElementChild;
      if (last) last.scrollIntoView({ block: "nearest" });
    });
  }

  function log(text, className) {
    $("all-lines").append(Cards.el("li", className || "", text));
  }

  function status(text, kind) {
    const node = $("live-status");
    node.textContent = text;
    node.className = `status status-${kind}`;
  }

  function showResults(info) {
    const body = $("results-table").tBodies[0];
    body.replaceChildren();
    for (const g of info.results) {
      const row = document.createElement("tr");
      const scores = g.scores.map((p, s) => `${info.seat_names[s] || `seat ${s}`} ${p}`).join(" · ");
      row.append(
        Cards.el("td", "num", String(g.game + 1)),
        Cards.el("td", "", g.outcome + (g.detail ? `: ${g.detail}` : "")),
        Cards.el("td", "scores", scores),
      );
      body.append(row);
    }
    $("results").hidden = false;
    const last = info.results[info.results.length - 1];
    if (last) final = last.scores;
    render();
  }

  state = fresh();
  render();
  const source = new EventSource(`/live/${encodeURIComponent(match.match_id)}/events`);
  source.addEventListener("open", () => status("live", "running"));
  source.addEventListener("public", (e) => {
    const event = JSON.parse(e.data);
    if (event.game !== game) {
      game = event.game;
      state = fresh();
      log(`game ${game + 1}`, "heading");
    }
    apply(event.text);
    log(event.text);
    draw();
  });
  source.addEventListener("end", (e) => {
    source.close();
    showResults(JSON.parse(e.data));
    status("match over", "finished");
  });
  source.addEventListener("failure", (e) => {
    source.close();
    status(JSON.parse(e.data).message, "stopped");
  });
  source.addEventListener("error", () => {
    if (source.readyState !== EventSource.CLOSED) status("connection lost: retrying…", "stopped");
  });
})();
