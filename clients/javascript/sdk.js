'use strict';
// A small SDK for Bezique Arena bots in JavaScript (Node.js 20+).
//
// It loads the protocol straight from the repository's proto/ folder, dials the referee, presents the
// seat's token in a Hello, answers every DecisionRequest with one Reply carrying the request's id and
// match id, and keeps going across games and matches until the referee ends the stream. Requests carry
// only the public events the seat has not been sent yet; the SDK keeps each game's whole public log.
// Before a game's first decision it calls bot.onGameStart() with the game's seed (gameSeed below), the
// same number the Python SDK computes, so a bot that draws from this.random plays a deal the same way
// in every run.

const crypto = require('node:crypto');
const path = require('node:path');
const util = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTOCOL_VERSION = 1;
// The repository's proto/ folder: this file lives in clients/javascript/.
const PROTO_DIR = path.resolve(__dirname, '..', '..', 'proto');
const BOT_PROTO = 'arena/wire/v1/bot.proto';

// Exit statuses of main(): the same numbers as the Python SDK's run().
const EXIT_OK = 0; // the referee ended the stream after the last match
const EXIT_BOT_ERROR = 1; // the bot's own code threw (its stack is printed)
const EXIT_USAGE = 2; // no referee address or token, or a bad argument
const EXIT_CONNECTION = 3; // the referee could not be reached, or the stream broke or ended mid-match
const EXIT_REFUSED = 4; // the referee refused the Hello (the reason is printed)

const SEED_VERSION = 'arena-game-seed/1'; // the first field of the text gameSeed() hashes

const LOADER_OPTIONS = {
  includeDirs: [PROTO_DIR],
  keepCase: true, // field names exactly as in the .proto files: request_id, legal_actions, ...
  // uint64 fields (request_id) as decimal strings: exact at any size (a Number is exact only below
  // 2^53), and accepted back as they are when the Reply is encoded.
  longs: String,
  enums: String, // enum values by name: "VERB_DECLARE", "OUTCOME_NORMAL", ...
  // proto3 leaves zero values (seat 0, game 0, "", false, empty lists) off the wire: with defaults
  // they are present as 0, "", false, [] instead of undefined.
  defaults: true,
  arrays: true,
  oneofs: true, // message.body names the field of the oneof that is set
};

let gatewayClass = null;

/**
 * The generated client class of arena.v1.BotGateway. A copy of sdk.js away from the repository finds
 * no proto/ folder: the error names the folder it looked in (protobufjs names only the relative path).
 */
function loadGateway() {
  if (gatewayClass === null) {
    let definition;
    try {
      definition = protoLoader.loadSync(BOT_PROTO, LOADER_OPTIONS);
    } catch (error) {
      throw new Error(
        `cannot load the bot protocol ${path.join(PROTO_DIR, BOT_PROTO)}: ${error.message} ` +
          "(sdk.js reads the proto/ folder of the repository it lies in: require it from " +
          "clients/javascript, or as 'arena-bot-js' in a bot the arena launches)",
      );
    }
    gatewayClass = grpc.loadPackageDefinition(definition).arena.v1.BotGateway;
  }
  return gatewayClass;
}

// ------------------------------------------------------------------------------ the game's seed

/** The kind of a card text: "QS.2" -> "QS", "AD" -> "AD". */
function kindOf(card) {
  return String(card).split('.', 1)[0];
}

/**
 * The text gameSeed() hashes: "arena-game-seed/1|variant|seat|game|dealer|turn-up|hand", the turn-up
 * and the hand's cards as kinds (pack numbers dropped), the hand sorted as plain strings and joined by
 * single spaces, duplicates kept; no turn-up: empty.
 */
function gameSeedText({ variant, seat, game, dealer, turnUp, hand }) {
  const kinds = Array.from(hand || [], kindOf).sort();
  const up = turnUp ? kindOf(turnUp) : '';
  return [SEED_VERSION, variant, seat, game, dealer, up, kinds.join(' ')].join('|');
}

/**
 * A game's seed for a bot's random numbers (a BigInt, 0 to 2^64 - 1): the first 8 bytes of the
 * SHA-256 of gameSeedText(), big-endian. The arguments come from the bot's first request of the game
 * (its seat and game, its observation's variant, dealer, turn_up and hand), so the same deal gives
 * the same seed in every run; the Python SDK's game_seed() gives the same number.
 */
function gameSeed(fields) {
  const digest = crypto.createHash('sha256').update(gameSeedText(fields), 'utf8').digest();
  return digest.readBigUInt64BE(0);
}

/** gameSeed() of a DecisionRequest (as this SDK decodes it). */
function requestSeed(req) {
  const obs = req.observation || {};
  return gameSeed({
    variant: obs.variant || '',
    seat: req.seat || 0,
    game: req.game || 0,
    dealer: obs.dealer || 0,
    turnUp: obs.turn_up || '',
    hand: obs.hand || [],
  });
}

/**
 * A seeded generator of floats in [0, 1) (mulberry32 over the seed folded to 32 bits). The seed is a
 * BigInt or an integer Number.
 */
function seededRandom(seed) {
  const big = BigInt.asUintN(64, BigInt(seed));
  let a = Number(BigInt.asUintN(32, big ^ (big >> 32n)));
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ------------------------------------------------------------------------------ the bot

/**
 * Override decide(); the other hooks are optional.
 *
 * decide(turn) gets one decision and returns the chosen action's text (or an object with a `text`,
 * such as one of turn.legal). It may be async. turn holds:
 *   requestId, matchId, game, seat  the request's identity (requestId is a decimal string)
 *   observation                     the seat's view (hand, trick, seats, trump, stock_size, ...)
 *   legal                           legal actions: {text, verb, combination, cards}, sorted
 *   clock                           {budgetMs, bankMs}: this decision's budget and the bank left
 *   events                          public log entries new since this player's previous request
 *   log                             the whole public log of this game seen so far
 *   welcome                         the Welcome of this match (time control, policies, seat names)
 *   gameSeed                        this game's seed (a BigInt, see gameSeed())
 */
class Bot {
  constructor(name = 'bot', version = '0') {
    this.name = name;
    this.version = version;
    this.gameSeed = 0n; // the current game's seed (see onGameStart)
    this.random = seededRandom(0n); // reseeded from the game's seed before each game
  }

  decide(_turn) {
    throw new Error('a bot must override decide(turn)');
  }

  onWelcome(_welcome) {}

  /**
   * A game starts for this bot (before its first decide() in the game): start holds matchId, game,
   * seat, seed (gameSeed(), a BigInt) and observation. By default: keep the seed in this.gameSeed and
   * reseed this.random with it. Override it (calling super.onGameStart or not) to seed your own
   * generators from start.seed.
   */
  onGameStart(start) {
    this.gameSeed = start.seed;
    this.random = seededRandom(start.seed);
  }

  onGameOver(_gameOver) {}

  onMatchOver(_matchOver) {}
}

// ------------------------------------------------------------------------------ errors

/** A failure of the session, not of the bot's code (reported by its message alone, without a stack). */
class ArenaError extends Error {
  constructor(message, exitCode = EXIT_CONNECTION) {
    super(message);
    this.name = 'ArenaError';
    this.exitCode = exitCode;
  }
}

/** No referee address or token, or a bad command-line argument. */
class UsageError extends ArenaError {
  constructor(message) {
    super(message, EXIT_USAGE);
    this.name = 'UsageError';
  }
}

/** The referee could not be reached. */
class UnreachableError extends ArenaError {
  constructor(message) {
    super(message, EXIT_CONNECTION);
    this.name = 'UnreachableError';
  }
}

/** The stream broke, or the referee ended it in the middle of a match. */
class StreamError extends ArenaError {
  constructor(message) {
    super(message, EXIT_CONNECTION);
    this.name = 'StreamError';
  }
}

/** The referee refused the Hello: unknown or expired token, seat already connected, ... */
class RefusedError extends ArenaError {
  constructor(reason) {
    super(`the referee refused the bot: ${reason}`, EXIT_REFUSED);
    this.name = 'RefusedError';
    this.reason = reason;
  }
}

/** A value as a bot author would write it (an object's fields, not "[object Object]"), cut short. */
function shown(value, limit = 80) {
  const text = util.inspect(value, { depth: 2, breakLength: Infinity, maxArrayLength: 3 });
  return text.length <= limit ? text : `${text.slice(0, limit - 3)}...`;
}

function oneLine(text, limit = 300) {
  // grpc-js ends some details with an empty "Resolution note:"; drop it.
  const line = String(text).split(/\s+/).join(' ').trim().replace(/ ?Resolution note:$/, '');
  return line.length <= limit ? line : `${line.slice(0, limit - 3)}...`;
}

// ------------------------------------------------------------------------------ the session

/**
 * Address and token from --address/--token (also --address=...), else ARENA_ADDRESS/ARENA_TOKEN;
 * an empty value (--token= with an unset shell variable) is not given, as in the Python SDK.
 * strict: an unknown argument is an error (else it is left to the bot).
 */
function parseArgs(argv, env = process.env, { strict = true } = {}) {
  const options = { address: env.ARENA_ADDRESS || '', token: env.ARENA_TOKEN || '' };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const match = /^--(address|token)(?:=(.*))?$/.exec(arg);
    if (match) {
      const value = match[2] !== undefined ? match[2] : argv[(i += 1)];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      if (value) options[match[1]] = value;
    } else if (arg === '-h' || arg === '--help') {
      options.help = true;
    } else if (strict) {
      throw new UsageError(
        `unknown argument ${JSON.stringify(arg)} (expected --address HOST:PORT --token TOKEN)`,
      );
    }
  }
  return options;
}

/**
 * The address and token to use: those given, else from the command line, else from the environment.
 */
function resolveOptions(options = {}, argv = process.argv.slice(2), env = process.env) {
  let { address, token } = options;
  if (!address || !token) {
    const found = parseArgs(argv, env, { strict: false });
    address = address || found.address;
    token = token || found.token;
  }
  if (!address) {
    throw new UsageError('no referee address: pass --address HOST:PORT or set ARENA_ADDRESS');
  }
  if (!token) throw new UsageError('no token: set ARENA_TOKEN (or pass --token TOKEN)');
  return { address, token };
}

/**
 * Play on one stream until the referee ends it. The address and token come from `options`, else
 * from the command line (--address, --token), else from ARENA_ADDRESS and ARENA_TOKEN.
 *
 * Resolves with the number of matches played. Rejects with a UsageError (no address or token), an
 * UnreachableError, a StreamError (the stream broke, or ended in the middle of a match), a
 * RefusedError (with the referee's reason), or whatever the bot's own code threw (the stream is then
 * dropped, which the referee records for the seat).
 */
function run(bot, options = {}) {
  let address;
  let token;
  let Gateway;
  try {
    ({ address, token } = resolveOptions(options));
    Gateway = loadGateway(); // a promise is rejected, never a throw: run(bot).catch() sees it all
  } catch (error) {
    return Promise.reject(error);
  }
  const client = new Gateway(address, grpc.credentials.createInsecure());
  const call = client.Play();
  const welcomes = new Map(); // match id -> Welcome, for the matches being played
  const logs = new Map(); // "match id/game" -> public log so far
  // "match id/game" -> the game's seed, for every turn (also when the bot's onGameStart does not
  // keep it in this.gameSeed)
  const seeds = new Map();
  let heard = false; // anything at all from the referee
  let welcomed = 0;
  let matchesOver = 0;
  let refused = null;
  let failed = null;
  let chain = Promise.resolve(); // messages are handled one at a time, in order

  const handle = async (message) => {
    switch (message.body) {
      case 'welcome': {
        const welcome = message.welcome;
        welcomed += 1;
        welcomes.set(welcome.match_id, welcome);
        await bot.onWelcome(welcome);
        break;
      }
      case 'request': {
        const req = message.request;
        const key = `${req.match_id}/${req.game}`;
        let log = logs.get(key);
        if (log === undefined) {
          log = [];
          logs.set(key, log);
          const seed = requestSeed(req);
          seeds.set(key, seed);
          await bot.onGameStart({
            matchId: req.match_id,
            game: req.game,
            seat: req.seat,
            seed,
            observation: req.observation,
          });
        }
        log.push(...req.events);
        const choice = await bot.decide({
          requestId: req.request_id,
          matchId: req.match_id,
          game: req.game,
          seat: req.seat,
          observation: req.observation,
          legal: req.legal_actions,
          clock: {
            budgetMs: req.clock ? req.clock.budget_ms : 0,
            bankMs: req.clock ? req.clock.bank_ms : 0,
          },
          events: req.events,
          log: log.slice(),
          welcome: welcomes.get(req.match_id) || null,
          gameSeed: seeds.get(key),
        });
        const action = choice !== null && typeof choice === 'object' ? choice.text : choice;
        if (typeof action !== 'string') {
          throw new TypeError(
            `decide() must return an action's text or one of turn.legal, got ${shown(choice)}`,
          );
        }
        call.write({ reply: { request_id: req.request_id, match_id: req.match_id, action } });
        break;
      }
      case 'game_over': {
        const over = message.game_over;
        logs.delete(`${over.match_id}/${over.game}`);
        seeds.delete(`${over.match_id}/${over.game}`);
        await bot.onGameOver(over);
        break;
      }
      case 'match_over': {
        const over = message.match_over;
        matchesOver += 1;
        for (const key of logs.keys()) {
          if (key.startsWith(`${over.match_id}/`)) {
            logs.delete(key);
            seeds.delete(key);
          }
        }
        welcomes.delete(over.match_id);
        await bot.onMatchOver(over);
        break;
      }
      case 'refused':
        refused = message.refused.reason;
        break;
      default: // message kinds this SDK does not use (event) or does not know yet
        break;
    }
  };

  const firstPlaying = () => welcomes.keys().next().value;

  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error) => {
      if (settled) return;
      settled = true;
      call.end();
      client.close();
      if (error) reject(error);
      else resolve(matchesOver);
    };

    call.on('data', (message) => {
      heard = true;
      chain = chain.then(() => (failed ? undefined : handle(message))).catch((error) => {
        failed = failed || error;
        call.cancel(); // the bot itself failed: drop the stream, the referee records it
        finish(error);
      });
    });
    call.on('error', (error) => {
      chain.then(() => {
        if (failed) return;
        if (refused !== null) return finish(new RefusedError(refused));
        const what = `${grpc.status[error.code] || error.code}: ${error.details || error.message}`;
        if (!heard) {
          if (error.code === grpc.status.UNAVAILABLE) {
            return finish(
              new UnreachableError(
                oneLine(`cannot reach the referee at ${address}: ${error.details || error.message}`),
              ),
            );
          }
          return finish(
            new StreamError(oneLine(`the referee at ${address} ended the stream before a Welcome: ${what}`)),
          );
        }
        if (welcomes.size > 0) {
          return finish(
            new StreamError(
              oneLine(`the stream to the referee at ${address} broke during match ${firstPlaying()}: ${what}`),
            ),
          );
        }
        if (matchesOver === 0) {
          return finish(new StreamError(oneLine(`the stream to the referee at ${address} broke: ${what}`)));
        }
        return finish(null); // broken between matches, after the last one was over: no game affected
      });
    });
    call.on('status', (status) => {
      if (status.code !== grpc.status.OK) return; // reported by 'error'
      chain.then(() => {
        if (failed) return;
        if (refused !== null) return finish(new RefusedError(refused));
        if (welcomed === 0) {
          return finish(new StreamError(`the referee at ${address} ended the stream without a Welcome or Refused`));
        }
        if (welcomes.size > 0) {
          return finish(
            new StreamError(`the referee at ${address} ended the stream in the middle of match ${firstPlaying()}`),
          );
        }
        return finish(null);
      });
    });

    call.write({
      hello: { token, name: bot.name, version: bot.version, protocol_version: PROTOCOL_VERSION },
    });
  });
}

/**
 * Command-line entry point: run the bot; exit 0 when the referee ends the stream after its matches,
 * else with the status of the failure (see EXIT_*) and a one-line message on stderr (a stack for the
 * bot's own error).
 */
function main(bot, argv = process.argv.slice(2)) {
  let options;
  try {
    options = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`${bot.name}: ${error.message}\n`);
    process.exitCode = EXIT_USAGE;
    return Promise.resolve();
  }
  if (options.help) {
    process.stdout.write(
      `usage: node ${path.basename(process.argv[1] || 'bot.js')} [--address HOST:PORT] [--token TOKEN]\n` +
        'Defaults: $ARENA_ADDRESS and $ARENA_TOKEN. A bot the arena launches gets its token only from\n' +
        '$ARENA_TOKEN; --token is for a bot started by hand against `arena serve`.\n',
    );
    return Promise.resolve();
  }
  return run(bot, options).then(
    () => {
      process.exitCode = EXIT_OK;
    },
    (error) => {
      if (error instanceof ArenaError) {
        process.stderr.write(`${bot.name}: ${error.message}\n`);
        process.exitCode = error.exitCode;
      } else {
        process.stderr.write(`${error && error.stack ? error.stack : String(error)}\n`);
        process.stderr.write(`${bot.name}: the bot's own code failed; stopping\n`);
        process.exitCode = EXIT_BOT_ERROR;
      }
    },
  );
}

module.exports = {
  Bot,
  ArenaError,
  UsageError,
  UnreachableError,
  StreamError,
  RefusedError,
  PROTOCOL_VERSION,
  PROTO_DIR,
  EXIT_OK,
  EXIT_BOT_ERROR,
  EXIT_USAGE,
  EXIT_CONNECTION,
  EXIT_REFUSED,
  SEED_VERSION,
  loadGateway,
  gameSeed,
  gameSeedText,
  seededRandom,
  run,
  parseArgs,
  resolveOptions,
  main,
};
