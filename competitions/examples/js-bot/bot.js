'use strict';
// An example submission in JavaScript: it declares the first combination it may, exchanges the seven
// of trumps when it can, and otherwise plays its lowest card.

const { Bot, main } = require('arena-bot-js');

const ORDER = '789JQKTA'; // Bezique's ranks, lowest first

function rank(text) {
  const card = text.trim().split(/\s+/).pop();
  const i = ORDER.indexOf(card[0]);
  return i < 0 ? 0 : i;
}

class Lowball extends Bot {
  constructor() {
    super('js-lowball', '1');
  }

  decide(turn) {
    const texts = turn.legal.map((a) => a.text);
    const declaration = texts.find((t) => t.startsWith('declare '));
    if (declaration) return declaration;
    const exchange = texts.find((t) => t.startsWith('exchange '));
    if (exchange) return exchange;
    const plays = texts.filter((t) => t.startsWith('play '));
    if (plays.length) return plays.reduce((a, b) => (rank(b) < rank(a) ? b : a));
    return texts[0];
  }
}

main(new Lowball());
