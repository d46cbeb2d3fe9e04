'use strict';
// A small SDK for Bezique Arena bots in JavaScript (Node.js 20+).
//
// It loads the protocol straight from the repository's proto/ folder, dials the referee, presents the
// seat's token in a Hello, answers every DecisionRequest with one Reply carrying the request's id and
// match id, and keeps going across games and matches until the referee ends the stream. Requests carry
// only the public events the seat has not been sent yet; the SDK keeps each game's whole public log.

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTOCOL_VERSION = 1;
// The repository's proto/ folder: this file lives in clients/javascript/.
const PROTO_DIR = path.resolve(__dirname, '..', '..', 'proto');
const BOT_PROTO = 'arena/wire/v1/bot.proto';

const LOADER_OPTIONS = {
  includeDirs: [PROTO_DIR],
  keepCase: true, // field names exactly as in the .proto files: request_id, legal_actions, ...
  longs: String, // uint64 request ids travel as decimal strings, never rounded
  enums: String, // enum values by name: "VERB_DECLARE", "OUTCOME_NORMAL", ...
  defaults: true,
  arrays: true,
  oneofs: true, // message.body names the field of the oneof that is set
};

let gatewayClass = null;

/** The generated client class of arena.v1.BotGateway. */
function loadGateway() {
  if (gatewayClass === null) {
    const definition = protoLoader.loadSync(BOT_PROTO, LOADER_OPTIONS);
    gatewayClass = grpc.loadPackageDefinition(definition).arena.v1.BotGateway;
  }
  return gatewayClass;
}

/**
 * Override decide(); the other hooks are optional.
 *
 * decide(turn) gets one decision and returns the chosen action's text (or an object with a `text`,
 * such as one of turn.legal). It may be async. turn holds:
 *   requestId, matchId, game, seat  the request's identity (requestId is a decimal string)
 *   observation                     the seat's view (hand, trick, seats, trump, stock_size, ...)
 *   legal                           legal actions: {text, verb, combination, cards}, sorted
 *   clock                           {budgetMs, bankMs}: this decision's budget and the bank left
 *   events                          public log entries new since this seat's previous request
 *   log                             the whole public log of this game seen so far
 *   welcome                         the Welcome of this match (time control, policies, seat names)
 */
class Bot {
  constructor(name = 'bot', version = '0') {
    this.name = name;
    this.version = version;
  }

  decide(_turn) {
    throw new Error('a bot must override decide(turn)');
  }

  onWelcome(_welcome) {}

  onGameOver(_gameOver) {}

  onMatchOver(_matchOver) {}
}

/** A failure to reach or keep the referee (reported by its message alone, without a stack). */
class ArenaError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ArenaError';
  }
}

/** The referee refused the Hello: unknown or expired token, seat already connected, ... */
class RefusedError extends ArenaError {
  constructor(reason) {
    super(`the referee refused the bot: ${reason}`);
    this.name = 'RefusedError';
    this.reason = reason;
  }
}

/**
 * Play on one stream until the referee ends it. Resolves with the number of matches played; rejects
 * with a RefusedError when the token is refused, or with the error that broke the stream.
 */
function run(bot, { address, token }) {
  if (!address || !token) {
    return Promise.reject(
      new ArenaError(
        'no referee address or token: pass --address and --token, or set ARENA_ADDRESS and ARENA_TOKEN',
      ),
    );
  }
  const Gateway = loadGateway();
  const client = new Gateway(address, grpc.credentials.createInsecure());
  const call = client.Play();
  const welcomes = new Map(); // match id -> Welcome
  const logs = new Map(); // "match id/game" -> public log so far
  let matchesOver = 0;
  let refused = null;
  let failed = null;
  let chain = Promise.resolve(); // messages are handled one at a time, in order

  const handle = async (message) => {
    switch (message.body) {
      case 'welcome': {
        const welcome = message.welcome;
        welcomes.set(welcome.match_id, welcome);
        await bot.onWelcome(welcome);
        break;
      }
      case 'request': {
        const req = message.request;
        const key = `${req.match_id}/${req.game}`;
        const log = logs.get(key) || [];
        log.push(...req.events);
        logs.set(key, log);
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
        });
        const action = choice !== null && typeof choice === 'object' ? choice.text : choice;
        if (typeof action !== 'string') {
          throw new Error(`decide() must return an action's text, got ${String(choice)}`);
        }
        call.write({ reply: { request_id: req.request_id, match_id: req.match_id, action } });
        break;
      }
      case 'game_over': {
        const over = message.game_over;
        logs.delete(`${over.match_id}/${over.game}`);
        await bot.onGameOver(over);
        break;
      }
      case 'match_over': {
        const over = message.match_over;
        matchesOver += 1;
        for (const key of logs.keys()) {
          if (key.startsWith(`${over.match_id}/`)) logs.delete(key);
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
        // The referee may close its end abruptly once every match on this stream is over.
        const benign = error.code === grpc.status.CANCELLED || error.code === grpc.status.UNAVAILABLE;
        if (benign && matchesOver > 0 && welcomes.size === 0) return finish(null);
        finish(new ArenaError(`the stream to the referee at ${address} failed: ${error.message}`));
      });
    });
    call.on('status', (status) => {
      if (status.code !== grpc.status.OK) return; // reported by 'error'
      chain.then(() => {
        if (failed) return;
        finish(refused !== null ? new RefusedError(refused) : null);
      });
    });

    call.write({
      hello: { token, name: bot.name, version: bot.version, protocol_version: PROTOCOL_VERSION },
    });
  });
}

/** Address and token from --address/--token (also --address=...), else ARENA_ADDRESS/ARENA_TOKEN. */
function parseArgs(argv, env = process.env) {
  const options = { address: env.ARENA_ADDRESS || '', token: env.ARENA_TOKEN || '' };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const match = /^--(address|token)(?:=(.*))?$/.exec(arg);
    if (match) {
      const value = match[2] !== undefined ? match[2] : argv[(i += 1)];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      options[match[1]] = value;
    } else if (arg === '-h' || arg === '--help') {
      options.help = true;
    } else {
      throw new Error(`unknown argument ${JSON.stringify(arg)} (expected --address ADDR --token TOKEN)`);
    }
  }
  return options;
}

/** Command-line entry point: run the bot, exit 0 when the referee ends the stream, else 1 with a message. */
function main(bot, argv = process.argv.slice(2)) {
  let options;
  try {
    options = parseArgs(argv);
  } catch (error) {
    process.stderr.write(`${bot.name}: ${error.message}\n`);
    process.exitCode = 2;
    return Promise.resolve();
  }
  if (options.help) {
    process.stdout.write(
      `usage: node ${path.basename(process.argv[1] || 'bot.js')} [--address HOST:PORT] [--token TOKEN]\n` +
        'Defaults: $ARENA_ADDRESS and $ARENA_TOKEN (set by the referee when it launches the bot).\n',
    );
    return Promise.resolve();
  }
  return run(bot, options).then(
    () => {
      process.exitCode = 0;
    },
    (error) => {
      const text = error instanceof ArenaError ? error.message : error.stack || String(error);
      process.stderr.write(`${bot.name}: ${text}\n`);
      process.exitCode = 1;
    },
  );
}

module.exports = {
  Bot,
  ArenaError,
  RefusedError,
  PROTOCOL_VERSION,
  PROTO_DIR,
  loadGateway,
  run,
  parseArgs,
  main,
};
