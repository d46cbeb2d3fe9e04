// The replay player: a recorded game step by step, in the full view (every hand) or one seat's view
// (that seat's hand alone: the server builds each view's frames from that seat's observations).
// Frames come from /api/games/ID/replay?view=full|SEAT (or the player's data-frames address: an author's
// challenge game's). Keys: left/right arrows, Home, End, space.
"use strict";

(() => {
  const root = document.getElementById("player");
  if (!root) return;
  const gameId = root.dataset.game;
  const source = root.dataset.frames || `/api/games/${gameId}/replay`;
  const $ = (id) => document.getElementById(id);
  const views = {};
  let data = null;
  let step = 0;
  let timer = null;
  let logItems = [];

  function readHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    return { view: params.get("view") || "full", step: parseInt(params.get("step") || "0", 10) || 0 };
  }

  function writeHash() {
    history.replaceState(null, "", `#view=${encodeURIComponent($("view").value)}&step=${step}`);
  }

  async function load(view) {
    if (!views[view]) {
      $("position").textContent = "loading…";
      const response = await fetch(`${source}?view=${encodeURIComponent(view)}`);
      const body = await response.json();
      if (!response.ok) throw new Error(body.error || `status ${response.status}`);
      views[view] = body;
    }
    data = views[view];
    buildLog();
  }

  function buildLog() {
    const all = $("all-lines");
    all.replaceChildren();
    logItems = [];
    data.frames.forEach((frame, i) => {
      for (const line of frame.lines) {
        const li = Cards.el("li", "", line);
        li.dataset.step = String(i);
        all.append(li);
        logItems.push(li);
      }
    });
    const scrub = $("scrub");
    scrub.max = String(data.frames.length - 1);
  }

  function names(seat) {
    return (data.players[seat] || []).join(" + ") || `seat ${seat}`;
  }

  function renderSeat(seat, frame, final) {
    const box = Cards.el("div", "seat");
    box.id = `seat-${seat.seat}`;
    if (frame.phase !== "over" && frame.to_act === seat.seat) box.classList.add("to-act");
    if (data.view !== "full" && data.view === seat.seat) box.classList.add("viewer");
    const head = Cards.el("div", "seat-head");
    head.append(Cards.el("span", "seat-name", `seat ${seat.seat}: ${names(seat.seat)}`));
    if (frame.dealer === seat.seat) head.append(Cards.el("span", "tag", "dealer"));
    if (frame.phase !== "over" && frame.to_act === seat.seat) head.append(Cards.el("span", "tag act", "to act"));
    const score = Cards.el("span", "score-total", String(seat.total));
    score.id = `score-${seat.seat}`;
    score.dataset.total = String(seat.total);
    score.title = "game total (this deal's points included)";
    const facts = Cards.el("div", "seat-facts");
    facts.append(
      score,
      Cards.el("span", "", ` points · this deal ${seat.deal_points} · tricks ${seat.tricks}`),
    );
    if (seat.carte_blanche) facts.append(Cards.el("span", "tag", "carte blanche"));
    if (seat.to_score.length) facts.append(Cards.el("span", "tag", `to score: ${seat.to_score.join(", ")}`));
    const hand = Cards.el("div", "cards hand");
    hand.setAttribute("aria-label", "hand");
    Cards.fill(hand, seat.hand, seat.hand === null ? seat.hand_size : 0);
    box.append(head, facts, hand);
    if (seat.table.length) {
      const table = Cards.el("div", "cards declared");
      Cards.fill(table, seat.table);
      box.append(Cards.el("div", "label", "declared, on the table"), table);
    }
    if (seat.open.length) {
      const open = Cards.el("div", "cards small");
      Cards.fill(open, seat.open);
      box.append(Cards.el("div", "label", "won face up"), open);
    }
    if (final) {
      box.append(Cards.el("div", "final", `final score ${data.scores[seat.seat] ?? seat.total}`));
    }
    return box;
  }

  function render() {
    const frames = data.frames;
    step = Math.max(0, Math.min(step, frames.length - 1));
    const frame = frames[step];
    const final = step === frames.length - 1;
    $("scrub").value = String(step);
    const who = frame.actor === null ? "" : ` · seat ${frame.actor}${frame.action ? `: ${frame.action}` : ""}`;
    $("position").textContent = `step ${step} of ${frames.length - 1} · deal ${frame.deal + 1}${who}`;
    $("position").dataset.step = String(step);
    Cards.suit($("trump"), frame.trump);
    Cards.fill($("turn-up"), frame.turn_up ? [frame.turn_up] : []);
    const stock = $("stock");
    stock.replaceChildren(frame.stock ? Cards.back(frame.stock) : Cards.el("span", "muted", "empty"));
    const seatNames = data.players.map((_, s) => names(s));
    Cards.trick($("trick"), frame.trick, seatNames);
    Cards.trick($("last-trick"), frame.last_trick, seatNames);
    // Rubicon: tricks lie face up until a brisque is played.
    $("heap-pile").hidden = !frame.heap.length;
    Cards.fill($("heap"), frame.heap);
    const seats = $("seats");
    seats.replaceChildren(...frame.seats.map((s) => renderSeat(s, frame, final)));
    const stepLines = $("step-lines");
    stepLines.replaceChildren();
    if (frame.failure) stepLines.append(Cards.el("li", "failure", `seat ${frame.actor}: ${frame.failure}${frame.detail ? `: ${frame.detail}` : ""}`));
    for (const line of frame.lines) stepLines.append(Cards.el("li", "", line));
    if (!frame.lines.length && !frame.failure) stepLines.append(Cards.el("li", "muted", "(nothing public)"));
    let lastShown = null;
    for (const li of logItems) {
      const at = parseInt(li.dataset.step, 10);
      li.hidden = at > step;
      li.classList.toggle("current", at === step);
      if (at <= step) lastShown = li;
    }
    if (lastShown) lastShown.scrollIntoView({ block: "nearest" });
    $("play").textContent = timer ? "⏸ pause" : "▶︎ play";
    writeHash();
  }

  function go(to) {
    if (!data) return;
    step = to;
    render();
  }

  function toggle() {
    if (timer) {
      clearInterval(timer);
      timer = null;
    } else if (data) {
      if (step >= data.frames.length - 1) step = 0;
      timer = setInterval(() => {
        if (step >= data.frames.length - 1) {
          toggle();
          return;
        }
        go(step + 1);
      }, 450);
    }
    if (data) render();
  }

  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => go(step - 1));
  $("next").addEventListener("click", () => go(step + 1));
  $("last").addEventListener("click", () => go(data ? data.frames.length - 1 : 0));
  $("play").addEventListener("click", toggle);
  $("scrub").addEventListener("input", (e) => go(parseInt(e.target.value, 10)));
  $("view").addEventListener("change", async (e) => {
    try {
      await load(e.target.value);
      render();
    } catch (err) {
      $("position").textContent = `cannot load this view: ${err.message}`;
    }
  });
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLSelectElement || (e.target instanceof HTMLInputElement && e.target.type !== "range")) return;
    const moves = {
      ArrowRight: () => go(step + 1),
      ArrowLeft: () => go(step - 1),
      Home: () => go(0),
      End: () => go(data ? data.frames.length - 1 : 0),
      " ": toggle,
    };
    if (moves[e.key] && !e.altKey && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      moves[e.key]();
    }
  });

  const start = readHash();
  const choice = Array.from($("view").options).some((o) => o.value === start.view) ? start.view : "full";
  $("view").value = choice;
  load(choice)
    .then(() => go(start.step))
    .catch((err) => {
      $("position").textContent = `cannot load the replay: ${err.message}`;
    });
})();
