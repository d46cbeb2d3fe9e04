// Cards drawn as cards (CSS, no images), from their text forms: "QS" (a kind), "QS.2" (pack 2's copy).
// Everything is built with DOM calls and textContent: text from the server is never parsed as markup.
"use strict";

const Cards = (() => {
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
  const RANKS = { 7: "7", 8: "8", 9: "9", J: "J", Q: "Q", K: "K", T: "10", A: "A" };
  const FORM = /^([789JQKTA])([SHDC])(?:\.([1-4]))?$/;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function card(text) {
    const m = FORM.exec(String(text));
    if (!m) return el("span", "card unknown", String(text));
    const [, rank, suit, pack] = m;
    const node = el("span", `card suit-${suit}`);
    node.dataset.card = text;
    node.title = `${RANKS[rank]} of ${SUIT_NAMES[suit]}${pack ? ` (pack ${pack})` : ""}`;
    node.append(el("span", "corner", RANKS[rank] + SUITS[suit]), el("span", "pip", SUITS[suit]));
    if (pack) node.append(el("span", "pack", pack));
    return node;
  }

  function back(count) {
    const node = el("span", "card back");
    node.title = "a hidden card";
    if (count !== undefined) node.append(el("span", "count", String(count)));
    return node;
  }

  // Fill `container` with face-up cards, or with `hidden` card backs.
  function fill(container, texts, hidden) {
    container.replaceChildren();
    for (const t of texts || []) container.append(card(t));
    for (let i = 0; i < (hidden || 0); i++) container.append(back());
  }

  // A trick: each card with the seat that played it.
  function trick(container, plays, names) {
    container.replaceChildren();
    for (const [seat, text] of plays || []) {
      const slot = el("span", "played");
      slot.append(card(text), el("span", "by", names && names[seat] ? names[seat] : `seat ${seat}`));
      container.append(slot);
    }
  }

  function suit(container, letter) {
    container.replaceChildren();
    if (!letter) {
      container.textContent = "none yet";
      return;
    }
    const node = el("span", `suit suit-${letter}`, SUITS[letter] || letter);
    node.title = SUIT_NAMES[letter] || letter;
    container.append(node);
  }

  return { card, back, fill, trick, suit, el, SUITS };
})();
