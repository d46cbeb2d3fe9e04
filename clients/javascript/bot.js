#!/usr/bin/env node
'use strict';
// An example Bezique Arena bot in JavaScript: it makes the best-scoring declaration it is allowed,
// and otherwise plays a random legal action. Its random numbers come from the game it is playing (the
// SDK's per-game seed, mixed with BOT_SEED, default 0), so it plays the same deal the same way in
// every run, however many games its process has played before.
//
//   node bot.js --address 127.0.0.1:50051 --token TOKEN
//   ARENA_ADDRESS=127.0.0.1:50051 ARENA_TOKEN=TOKEN node bot.js

const { Bot, main, seededRandom } = require('./sdk');

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
  constructor(salt = seedFrom(process.env.BOT_SEED)) {
    super('js-declarer', '2');
    this.salt = BigInt(salt);
    this.random = seededRandom(this.salt); // until a game starts
  }

  onGameStart(start) {
    super.onGameStart(start);
    this.random = seededRandom(start.seed ^ this.salt);
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

module.exports = { DeclaringRandomBot, SCORES, declarationScore, seedFrom };

if (require.main === module) {
  main(new DeclaringRandomBot());
}
