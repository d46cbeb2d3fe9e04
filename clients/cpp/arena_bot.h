// Bezique Arena C++ SDK: dial the referee, say Hello, answer every decision request, until the
// referee ends the stream.
//
// A bot derives from arena_bot::Bot, overrides decide() and calls arena_bot::main_for(bot, argc,
// argv). The SDK reads the referee's address and the seat's token from the command line (--address,
// --token) or else from ARENA_ADDRESS and ARENA_TOKEN, sends the Hello, keeps each game's public
// log, parses every request's legal actions into verb, cards and combination, and goes on across
// games and matches (further Welcomes on the same stream) until the stream ends. The protocol
// contract is clients/README.md; the messages are the generated classes of proto/arena/wire/v1
// (namespace arena::v1), available to a bot through Turn::request and the hooks.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "arena/wire/v1/bot.pb.h"
#include "arena/wire/v1/game.pb.h"

namespace arena_bot {

inline constexpr uint32_t kProtocolVersion = 1;

// Exit statuses of main_for(), the same as the Python and JavaScript SDKs'.
inline constexpr int kExitOk = 0;          // the referee ended the stream after the last match
inline constexpr int kExitBotError = 1;    // the bot's own code threw
inline constexpr int kExitUsage = 2;       // no address or token, or a bad command-line option
inline constexpr int kExitConnection = 3;  // unreachable, the stream broke or ended mid-match, or
                                           // the referee sent a request the SDK cannot read
inline constexpr int kExitRefused = 4;     // the referee refused the Hello

// ------------------------------------------------------------------------------------------ cards

// Ranks in the order of play, 7 lowest (0) to ace highest (7): A > T > K > Q > J > 9 > 8 > 7.
enum Rank : int { kSeven = 0, kEight, kNine, kJack, kQueen, kKing, kTen, kAce };
// Suits in the order of their letters S H D C.
enum Suit : int { kSpades = 0, kHearts, kDiamonds, kClubs };

inline constexpr char kRankChars[] = "789JQKTA";
inline constexpr char kSuitChars[] = "SHDC";

// Thrown for a text that is not what the protocol says it is (a card, an action).
class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A card reference as the referee writes it: "QS" (a copy of the queen of spades the seat holds and
// has not declared: pack 0 here) or "QS.2" (the physical copy of pack 2, 1 to 4: a public card).
struct Card {
  int rank = 0;  // Rank
  int suit = 0;  // Suit
  int pack = 0;  // 0: an undeclared copy; 1..4: that physical copy

  // "QS" or "QS.2"; throws ParseError naming the text for anything else.
  static Card parse(const std::string& text);
  int kind() const { return suit * 8 + rank; }  // 0..31, the same numbers as the rules engine
  std::string kind_text() const;                // "QS", without the pack
  std::string text() const;                     // "QS" or "QS.2", as parsed
  bool brisque() const { return rank == kAce || rank == kTen; }
};

// Suit of a trump text ("S", "H", "D", "C"); -1 for "" (no trump yet, Rubicon). Throws ParseError.
int parse_suit(const std::string& text);

// ---------------------------------------------------------------------------------------- actions

// The verbs this SDK knows, from the Action's verb (or, when that is unset or newer than this SDK,
// the first word of its text). Other: a verb this SDK does not know (one added to the protocol
// later); Action::verb_text names it and the action is passed through whole.
enum class Verb { kPlay, kDeclare, kExchange, kDone, kOther };

// One legal action of a request. `text` is what to reply with, exactly as it came.
struct Action {
  std::string text;  // exact text form: reply with this
  Verb verb = Verb::kOther;
  std::string verb_text;  // the text's first word: "play", "declare", ... (or an unknown verb)
  int combination = 0;    // arena::v1::Combination number for a declaration, else 0
  std::string combination_text;         // "royal-marriage", ... for a declaration, else ""
  std::vector<std::string> card_texts;  // the Action's card references, as sent
  std::vector<Card> cards;              // the same, parsed (for an unknown verb, those that parse)

  // Parse one Action message. Throws ParseError for an action that breaks the protocol (empty text,
  // a card that is no card, a play without its card, a verb that contradicts the text); an unknown
  // verb is not an error.
  static Action from_message(const arena::v1::Action& message);
};

// "royal-marriage" for arena::v1::COMBINATION_ROYAL_MARRIAGE, "" for a number this SDK does not
// know.
std::string combination_name(int combination);

// --------------------------------------------------------------------------------------- the turn

struct Clock {
  uint32_t budget_ms = 0;  // for this decision: a reply within budget + grace costs nothing
  uint32_t bank_ms = 0;    // left in this game's bank, drawn on past the budget
  uint32_t grace_ms = 0;   // the match's transport allowance (from its Welcome)
  std::chrono::steady_clock::time_point received;  // when the SDK read the request
  // Reply by this time and the decision costs nothing: received + budget.
  std::chrono::steady_clock::time_point deadline() const;
  // Past this time the referee has timed the seat out: received + budget + bank + grace.
  std::chrono::steady_clock::time_point limit() const;
  // Milliseconds left until deadline() (negative once past it).
  int64_t remaining_ms() const;
};

// What a bot is given at each decision.
struct Turn {
  const arena::v1::DecisionRequest& request;  // the whole message (observation, events, ...)
  const arena::v1::Observation& view;         // request.observation()
  const arena::v1::Welcome* welcome;          // the match's Welcome (null if none was seen)
  std::vector<Action> legal;                  // the legal actions, in the referee's (sorted) order
  std::vector<Card> hand;                     // view.hand(), parsed
  std::vector<std::pair<int, Card>> trick;    // view.trick(): (seat, card), in the order played
  int seat;                                   // the seat to act (request.seat())
  int trump;                                  // Suit, or -1 when no trump is fixed yet (Rubicon)
  Clock clock;
  const std::vector<std::string>& log;  // this game's public log so far (events included)
  uint64_t game_seed;                   // game_seed() of this game (see Bot::on_game_start)
};

// A request's parts the SDK reads for the bot. parse_request() throws ParseError, naming the field,
// for a request that breaks the protocol (no legal actions, a card that is no card, ...).
struct ParsedRequest {
  std::vector<Action> legal;
  std::vector<Card> hand;
  std::vector<std::pair<int, Card>> trick;
  int trump = -1;
};
ParsedRequest parse_request(const arena::v1::DecisionRequest& request);

// Before a game's first decide(): the game's seed and the first request of the game.
struct GameStart {
  const arena::v1::DecisionRequest& request;
  uint64_t seed;
};

// ----------------------------------------------------------------------------------------- the bot

class Bot {
 public:
  Bot(std::string name, std::string version)
      : name_(std::move(name)), version_(std::move(version)) {}
  virtual ~Bot() = default;

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }

  // The action to answer: the text of one of turn.legal (copy it: turn.legal[i].text).
  virtual std::string decide(const Turn& turn) = 0;

  // Optional hooks.
  virtual void on_welcome(const arena::v1::Welcome& welcome) { (void)welcome; }
  // By default: keep the seed in game_seed and reseed rng with it, so that a bot drawing its random
  // numbers from rng plays the same deal the same way in every run.
  virtual void on_game_start(const GameStart& start) {
    game_seed = start.seed;
    rng.seed(start.seed);
  }
  virtual void on_game_over(const arena::v1::GameOver& over) { (void)over; }
  virtual void on_match_over(const arena::v1::MatchOver& over) { (void)over; }

 protected:
  uint64_t game_seed = 0;
  std::mt19937_64 rng{0};

 private:
  std::string name_;
  std::string version_;
};

// ------------------------------------------------------------------------------------ the session

// The failures of a session, each with its exit status; what() is the one-line message.
class SessionError : public std::runtime_error {
 public:
  SessionError(int exit_code, const std::string& message)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

struct Options {
  std::string address;  // HOST:PORT or unix:PATH
  std::string token;
  bool help = false;
};

// --address HOST:PORT / --address=HOST:PORT, --token TOKEN / --token=TOKEN, --help; missing ones
// from ARENA_ADDRESS and ARENA_TOKEN (the command line wins). Throws SessionError(kExitUsage) for
// an unknown option or an option without its value. A missing address or token is left empty here.
Options parse_options(const std::vector<std::string>& args);

// One session on one stream until the referee ends it; the number of matches played. Throws
// SessionError for the session's failures and lets the bot's own exceptions through (the stream is
// cancelled first, which the referee records for the seat).
int play(Bot& bot, const std::string& address, const std::string& token);

// The command-line entry point: options, play(), and every failure turned into one line on stderr
// ("NAME: what happened") and its exit status. Returns the status for main() to return.
int main_for(Bot& bot, int argc, char** argv);

// ------------------------------------------------------------------------------------ the seed

// "arena-game-seed/1|VARIANT|SEAT|GAME|DEALER|TURN_UP|HAND" (pack numbers dropped, the hand's kinds
// sorted as byte strings and joined by spaces), as clients/README.md "The game's seed" defines it.
std::string game_seed_text(const std::string& variant, int seat, int game, int dealer,
                           const std::string& turn_up, const std::vector<std::string>& hand);
// The first 8 bytes of the SHA-256 of game_seed_text(), big-endian.
uint64_t game_seed(const std::string& variant, int seat, int game, int dealer,
                   const std::string& turn_up, const std::vector<std::string>& hand);
uint64_t request_seed(const arena::v1::DecisionRequest& request);

// The SHA-256 digest of `data` (32 bytes).
std::string sha256(const std::string& data);

// Each game's public log and seed, by (match id, game), as the session keeps them: a request
// carries only the events since the seat's previous one, and the seed is the game's first
// request's.
class GameLogs {
 public:
  struct Game {
    std::vector<std::string> log;  // the public log so far
    uint64_t seed = 0;             // request_seed() of the game's first request
  };
  // The game of `request`, its events appended; `first` set when this is the game's first request.
  Game& on_request(const arena::v1::DecisionRequest& request, bool& first);
  void end_game(const std::string& match_id, int game);  // GameOver
  void end_match(const std::string& match_id);           // MatchOver: every game of the match
  size_t size() const { return games_.size(); }

 private:
  std::map<std::pair<std::string, int>, Game> games_;
};

// The entries of the current deal in a game's log (from its last "deal N: ..." line on).
std::vector<std::string> deal_log(const std::vector<std::string>& log);

}  // namespace arena_bot
