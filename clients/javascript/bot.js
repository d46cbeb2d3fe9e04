#!/usr/bin/env node
'use strict';
// An example Bezique Arena bot in JavaScript: it makes the best-scoring declaration it is allowed,
// and otherwise plays a random legal action drawn from a seeded generator (env BOT_SEED, default 0).
//
//   node bot.js --address 127.0.0.1:50051 --token TOKEN
//   ARENA_ADDRESS=127.0.0.1:50051 ARENA_TOKEN=TOKEN node bot.js

const { Bot, main } = require('./sdk');

// Points of each combination, by the name used in action texts ("declare <name> <cards>"). The ordinary
// scores; plain-sequence and carte-blanche occur only in Rubicon. Exchanging the seven of trumps for the
// turn-up ("exchange 7H") scores like declaring it.
const SCORES = {
  marriage: 20,
  'royal-marriage': 40,
  'plain-sequence': 150,
  sequence: 250,
  bezique: 40,
  'double-bezique': 500,
  'triple-bezique': 1500,
  'quadruple-bezique': 4500,
  'four-knaves': 40,
  'four-queens': 60,
  'four-kings': 80,
  'four-aces': 100,
  'seven-of-trumps': 10,
  'carte-blanche': 50,
};

/** The points an action scores by itself, or null when it is not a declaration. */
function declarationScore(text) {
  const words = text.trim().split(/\s+/);
  if (words[0] === 'declare' && words.length >= 2) {
    return SCORES[words[1]] !== undefined ? SCORES[words[1]] : 1; // an unknown combination still scores
  }
  if (words[0] === 'exchange') return SCORES['seven-of-trumps'];
  return null;
}

/** mulberry32: a small, fast, seeded 32-bit generator; returns floats in [0, 1). */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed from BOT_SEED: an integer as given, any other text hashed (FNV-1a). */
function seedFrom(text) {
  const value = String(text === undefined ? '0' : text).trim();
  if (/^-?\d+$/.test(value)) return Number(BigInt.asUintN(32, BigInt(value)));
  let hash = 0x811c9dc5;
  for (const ch of value) {
    hash ^= ch.codePointAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

class DeclaringRandomBot extends Bot {
  constructor(seed = seedFrom(process.env.BOT_SEED)) {
    super('js-declarer', '1');
    this.random = mulberry32(seed);
  }

  decide(turn) {
    const texts = turn.legal.map((action) => action.text);
    let best = null;
    let bestScore = -1;
    for (const text of texts) {
      const score = declarationScore(text);
      if (score === null) continue;
      // On a tie, exchanging the seven beats declaring it: the same 10 points, and the turn-up too.
      if (score > bestScore || (score === bestScore && text.startsWith('exchange '))) {
        best = text;
        bestScore = score;
      }
    }
    if (best !== null) return best;
    return texts[Math.floor(this.random() * texts.length)];
  }
}

module.exports = { DeclaringRandomBot, SCORES, declarationScore, mulberry32, seedFrom };

if (require.main === module) {
  main(new DeclaringRandomBot());
}
