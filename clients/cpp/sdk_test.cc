// The SDK's own tests (make test): cards, actions (unknown verbs included), requests that break the
// protocol, the game's seed and the command line. Each failure prints its line; the status is the
// count.
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>

#include "arena_bot.h"

using namespace arena_bot;

namespace {

int failures = 0;
int checks = 0;

void check(bool ok, const std::string& what, int line) {
  ++checks;
  if (!ok) {
    ++failures;
    std::cerr << "sdk_test.cc:" << line << ": FAILED: " << what << "\n";
  }
}
#define CHECK(cond) check((cond), #cond, __LINE__)

// The ParseError (or SessionError) message `body` throws, or "" when it throws none.
std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const ParseError& error) {
    return error.what();
  } catch (const SessionError& error) {
    return "status " + std::to_string(error.exit_code()) + ": " + error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

arena::v1::Action message(const std::string& text, int verb, int combination = 0,
                          std::vector<std::string> cards = {}) {
  arena::v1::Action action;
  action.set_text(text);
  action.set_verb(static_cast<arena::v1::Verb>(verb));
  action.set_combination(static_cast<arena::v1::Combination>(combination));
  for (const std::string& card : cards) action.add_cards(card);
  return action;
}

void cards() {
  const Card qs = Card::parse("QS");
  CHECK(qs.rank == kQueen && qs.suit == kSpades && qs.pack == 0);
  CHECK(qs.text() == "QS" && qs.kind() == 4 && !qs.brisque());
  const Card td2 = Card::parse("TD.2");
  CHECK(td2.rank == kTen && td2.suit == kDiamonds && td2.pack == 2 && td2.brisque());
  CHECK(td2.text() == "TD.2" && td2.kind_text() == "TD" && td2.kind() == 2 * 8 + 6);
  CHECK(Card::parse("7C").kind() == 24 && Card::parse("AH.4").pack == 4);
  for (const char* bad : {"", "Q", "QX", "1S", "QS.5", "QS.0", "QS2", "QS.", "qs", "QS.22"}) {
    CHECK(contains(error_of([bad] { Card::parse(bad); }), "expected a card such as QS"));
  }
  CHECK(parse_suit("") == -1 && parse_suit("H") == kHearts && parse_suit("C") == kClubs);
  CHECK(contains(error_of([] { parse_suit("X"); }), "expected a trump suit"));
}

void actions() {
  Action play = Action::from_message(message("play QS", 1, 0, {"QS"}));
  CHECK(play.verb == Verb::kPlay && play.verb_text == "play" && play.text == "play QS");
  CHECK(play.cards.size() == 1 && play.cards[0].rank == kQueen && play.combination == 0);

  Action declare =
      Action::from_message(message("declare royal-marriage KH QH", 2, 2, {"KH", "QH"}));
  CHECK(declare.verb == Verb::kDeclare && declare.combination == 2);
  CHECK(declare.combination_text == "royal-marriage" && declare.cards.size() == 2);
  CHECK(declare.cards[0].rank == kKing && declare.cards[1].text() == "QH");

  Action exchange = Action::from_message(message("exchange 7H", 3, 0, {"7H"}));
  CHECK(exchange.verb == Verb::kExchange && exchange.cards[0].rank == kSeven);
  Action done = Action::from_message(message("done", 4));
  CHECK(done.verb == Verb::kDone && done.cards.empty() && done.text == "done");
  Action carte = Action::from_message(message("declare carte-blanche", 2, 14));
  CHECK(carte.verb == Verb::kDeclare && carte.combination_text == "carte-blanche");

  // Structured fields missing: the text says it all.
  Action bare = Action::from_message(message("declare bezique QS.1 JD", 0));
  CHECK(bare.verb == Verb::kDeclare && bare.combination == 5 && bare.cards.size() == 2);
  CHECK(bare.cards[0].pack == 1 && bare.card_texts[1] == "JD");

  // A verb newer than this SDK (a number it does not know, or none): passed through as text.
  Action inquire = Action::from_message(message("inquire", 5));
  CHECK(inquire.verb == Verb::kOther && inquire.verb_text == "inquire" &&
        inquire.text == "inquire");
  CHECK(inquire.cards.empty() && inquire.combination == 0);
  Action other = Action::from_message(message("inquire seat-2 QS", 0, 0, {"seat-2", "QS"}));
  CHECK(other.verb == Verb::kOther && other.verb_text == "inquire");
  CHECK(other.card_texts.size() == 2 && other.cards.size() == 1 && other.cards[0].text() == "QS");
  Action unknown = Action::from_message(message("Pass", 9));
  CHECK(unknown.verb == Verb::kOther && unknown.verb_text == "pass" && unknown.text == "Pass");
  // A combination newer than this SDK: its name from the text, number 0.
  Action newer = Action::from_message(message("declare grand-bezique QS JD", 2, 40, {"QS", "JD"}));
  CHECK(newer.verb == Verb::kDeclare && newer.combination == 0);
  CHECK(newer.combination_text == "grand-bezique" && newer.cards.size() == 2);

  // What breaks the protocol.
  CHECK(contains(error_of([] { Action::from_message(message("", 1)); }), "empty text"));
  CHECK(contains(error_of([] { Action::from_message(message("   ", 4)); }), "empty text"));
  CHECK(contains(error_of([] { Action::from_message(message("play ZZ", 1, 0, {"ZZ"})); }),
                 "action 'play ZZ': expected a card such as QS"));
  CHECK(contains(error_of([] { Action::from_message(message("play QS", 2, 0, {"QS"})); }),
                 "has the verb VERB_DECLARE but its text says 'play'"));
  CHECK(contains(error_of([] { Action::from_message(message("play", 1)); }),
                 "must name exactly one card, names 0"));
  CHECK(contains(error_of([] { Action::from_message(message("done QS", 4, 0, {"QS"})); }),
                 "must name no card"));
  CHECK(contains(error_of([] { Action::from_message(message("declare", 2)); }),
                 "names no combination"));
  CHECK(combination_name(13) == "seven-of-trumps" && combination_name(0).empty() &&
        combination_name(99).empty());
}

void requests() {
  arena::v1::DecisionRequest request;
  CHECK(contains(error_of([&] { parse_request(request); }), "it lists no legal action"));
  *request.add_legal_actions() = message("play QS", 1, 0, {"QS"});
  *request.add_legal_actions() = message("inquire", 5);
  request.mutable_observation()->add_hand("QS");
  request.mutable_observation()->add_hand("KH.2");
  auto* played = request.mutable_observation()->add_trick();
  played->set_seat(1);
  played->set_card("AS.1");
  request.mutable_observation()->set_trump("D");
  ParsedRequest parsed = parse_request(request);
  CHECK(parsed.legal.size() == 2 && parsed.legal[1].verb == Verb::kOther);
  CHECK(parsed.hand.size() == 2 && parsed.hand[1].pack == 2 && parsed.trump == kDiamonds);
  CHECK(parsed.trick.size() == 1 && parsed.trick[0].first == 1 &&
        parsed.trick[0].second.rank == kAce);

  arena::v1::DecisionRequest bad_hand = request;
  bad_hand.mutable_observation()->add_hand("XX");
  CHECK(contains(error_of([&] { parse_request(bad_hand); }), "observation.hand: expected a card"));
  arena::v1::DecisionRequest bad_action = request;
  *bad_action.add_legal_actions() = message("exchange 7", 3, 0, {"7"});
  CHECK(contains(error_of([&] { parse_request(bad_action); }),
                 "legal action 2: action 'exchange 7': expected a card"));
  arena::v1::DecisionRequest bad_trump = request;
  bad_trump.mutable_observation()->set_trump("spades");
  CHECK(contains(error_of([&] { parse_request(bad_trump); }), "observation.trump"));
}

void seeds() {
  // FIPS 180-2 appendix B.1.
  std::string digest = sha256("abc");
  std::string hex;
  for (unsigned char c : digest) {
    static const char* digits = "0123456789abcdef";
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  CHECK(hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256(std::string(1000, 'a')).size() == 32);
  // clients/README.md, "The game's seed".
  CHECK(game_seed_text("two-handed", 0, 0, 1, "AD.1", {"TS", "QS", "7C", "QS.2"}) ==
        "arena-game-seed/1|two-handed|0|0|1|AD|7C QS QS TS");
  CHECK(game_seed("two-handed", 0, 0, 1, "AD.1", {"TS", "QS", "7C", "QS.2"}) ==
        713393136448822412ULL);
  CHECK(game_seed_text("rubicon", 1, 2, 0, "", {}) == "arena-game-seed/1|rubicon|1|2|0||");

  CHECK(deal_log({"a", "deal 1: x", "b", "deal 2: y", "c"}) ==
        (std::vector<std::string>{"deal 2: y", "c"}));
  CHECK(deal_log({"a", "b"}).size() == 2);
}

arena::v1::DecisionRequest game_request(const std::string& match_id, int game,
                                        std::vector<std::string> hand,
                                        std::vector<std::string> events) {
  arena::v1::DecisionRequest request;
  request.set_match_id(match_id);
  request.set_game(game);
  request.set_seat(0);
  request.mutable_observation()->set_variant("two-handed");
  request.mutable_observation()->set_dealer(1);
  request.mutable_observation()->set_turn_up("AD.1");
  for (const std::string& card : hand) request.mutable_observation()->add_hand(card);
  for (const std::string& event : events) request.add_events(event);
  return request;
}

void game_logs() {
  GameLogs games;
  bool first = false;
  GameLogs::Game& g =
      games.on_request(game_request("m", 0, {"TS", "QS", "7C", "QS"}, {"a", "b"}), first);
  CHECK(first && g.log == (std::vector<std::string>{"a", "b"}));
  CHECK(g.seed == 713393136448822412ULL);  // the README's example
  // The hand has changed by the next request: the game's seed stays the first request's.
  GameLogs::Game& again = games.on_request(game_request("m", 0, {"QS", "7C", "8H"}, {"c"}), first);
  CHECK(!first && &again == &g && g.log == (std::vector<std::string>{"a", "b", "c"}));
  CHECK(g.seed == 713393136448822412ULL);
  games.on_request(game_request("m", 1, {"AS"}, {"x"}), first);
  CHECK(first && games.size() == 2);
  games.on_request(game_request("n", 0, {"AS"}, {}), first);
  CHECK(first && games.size() == 3);
  games.end_game("m", 0);
  CHECK(games.size() == 2);
  games.on_request(game_request("m", 0, {"AS"}, {"y"}), first);
  CHECK(first);  // a game over is forgotten: the same key starts afresh
  games.end_match("m");
  CHECK(games.size() == 1);
  GameLogs::Game& other = games.on_request(game_request("n", 0, {}, {"z"}), first);
  CHECK(!first && other.log == (std::vector<std::string>{"z"}));
}

void options() {
  unsetenv("ARENA_ADDRESS");
  unsetenv("ARENA_TOKEN");
  Options given = parse_options({"--address", "127.0.0.1:5", "--token=abc"});
  CHECK(given.address == "127.0.0.1:5" && given.token == "abc" && !given.help);
  setenv("ARENA_ADDRESS", "unix:/run/arena/referee.sock", 1);
  setenv("ARENA_TOKEN", "from-env", 1);
  Options env = parse_options({});
  CHECK(env.address == "unix:/run/arena/referee.sock" && env.token == "from-env");
  Options wins = parse_options({"--address=h:1"});
  CHECK(wins.address == "h:1" && wins.token == "from-env");
  CHECK(parse_options({"--help"}).help);
  CHECK(error_of([] { parse_options({"--port", "1"}); }) ==
        "status 2: unknown option '--port' (the options are --address HOST:PORT, --token TOKEN "
        "and --help)");
  CHECK(error_of([] { parse_options({"--token"}); }) == "status 2: --token needs a value");
  unsetenv("ARENA_ADDRESS");
  unsetenv("ARENA_TOKEN");
}

void clocks() {
  Clock clock;
  clock.budget_ms = 1000;
  clock.bank_ms = 500;
  clock.grace_ms = 100;
  clock.received = std::chrono::steady_clock::now();
  CHECK(clock.deadline() - clock.received == std::chrono::milliseconds(1000));
  CHECK(clock.limit() - clock.received == std::chrono::milliseconds(1601));
  CHECK(clock.remaining_ms() <= 1000 && clock.remaining_ms() > 0);
}

}  // namespace

int main() {
  cards();
  actions();
  requests();
  seeds();
  game_logs();
  options();
  clocks();
  std::cout << checks << " checks, " << failures << " failed" << std::endl;
  return failures == 0 ? 0 : 1;
}
