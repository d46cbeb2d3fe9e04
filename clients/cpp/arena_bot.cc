// Bezique Arena C++ SDK (see arena_bot.h).
#include "arena_bot.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "arena/wire/v1/bot.grpc.pb.h"

namespace arena_bot {

namespace {

// Text from the referee, quoted in a one-line message: control characters dropped, at most 80
// bytes.
std::string quoted(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (out.size() >= 80) {
      out += "...";
      break;
    }
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  }
  return "'" + out + "'";
}

// Whitespace runs folded to one space, at most 300 bytes: a message is one line.
std::string one_line(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  if (out.size() > 300) out = out.substr(0, 297) + "...";
  return out;
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Combination names by number (arena::v1::Combination, the engine's Combo).
constexpr std::array<const char*, 15> kCombinationNames = {
    "",
    "marriage",
    "royal-marriage",
    "plain-sequence",
    "sequence",
    "bezique",
    "double-bezique",
    "triple-bezique",
    "quadruple-bezique",
    "four-knaves",
    "four-queens",
    "four-kings",
    "four-aces",
    "seven-of-trumps",
    "carte-blanche",
};

int combination_number(const std::string& name) {
  for (size_t i = 1; i < kCombinationNames.size(); ++i) {
    if (name == kCombinationNames[i]) return static_cast<int>(i);
  }
  return 0;
}

// A verb's word in a text, or kOther.
Verb verb_of_word(const std::string& word) {
  if (word == "play") return Verb::kPlay;
  if (word == "declare") return Verb::kDeclare;
  if (word == "exchange") return Verb::kExchange;
  if (word == "done") return Verb::kDone;
  return Verb::kOther;
}

// A verb's number on the wire, or kOther for 0 (unset) and numbers newer than this SDK.
Verb verb_of_number(int number) {
  switch (number) {
    case arena::v1::VERB_PLAY:
      return Verb::kPlay;
    case arena::v1::VERB_DECLARE:
      return Verb::kDeclare;
    case arena::v1::VERB_EXCHANGE:
      return Verb::kExchange;
    case arena::v1::VERB_DONE:
      return Verb::kDone;
    default:
      return Verb::kOther;
  }
}

const char* verb_word(Verb verb) {
  switch (verb) {
    case Verb::kPlay:
      return "play";
    case Verb::kDeclare:
      return "declare";
    case Verb::kExchange:
      return "exchange";
    case Verb::kDone:
      return "done";
    case Verb::kOther:
      break;
  }
  return "";
}

const char* status_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

}  // namespace

// ------------------------------------------------------------------------------------------ cards

Card Card::parse(const std::string& text) {
  auto bad = [&text]() {
    return ParseError(
        "expected a card such as QS, TD, 7H or QS.2 (rank one of 789JQKTA, suit one of "
        "SHDC, pack 1 to 4), got " +
        quoted(text));
  };
  if (text.size() != 2 && text.size() != 4) throw bad();
  const char* rank = std::strchr(kRankChars, text[0]);
  const char* suit = std::strchr(kSuitChars, text[1]);
  if (text[0] == '\0' || text[1] == '\0' || rank == nullptr || suit == nullptr) throw bad();
  Card card;
  card.rank = static_cast<int>(rank - kRankChars);
  card.suit = static_cast<int>(suit - kSuitChars);
  if (text.size() == 4) {
    if (text[2] != '.' || text[3] < '1' || text[3] > '4') throw bad();
    card.pack = text[3] - '0';
  }
  return card;
}

std::string Card::kind_text() const {
  return std::string{kRankChars[rank & 7], kSuitChars[suit & 3]};
}

std::string Card::text() const {
  return pack == 0 ? kind_text() : kind_text() + "." + std::to_string(pack);
}

int parse_suit(const std::string& text) {
  if (text.empty()) return -1;
  const char* suit = text.size() == 1 ? std::strchr(kSuitChars, text[0]) : nullptr;
  if (suit == nullptr || text[0] == '\0') {
    throw ParseError("expected a trump suit S, H, D, C or nothing, got " + quoted(text));
  }
  return static_cast<int>(suit - kSuitChars);
}

// ---------------------------------------------------------------------------------------- actions

std::string combination_name(int combination) {
  if (combination <= 0 || combination >= static_cast<int>(kCombinationNames.size())) return "";
  return kCombinationNames[static_cast<size_t>(combination)];
}

Action Action::from_message(const arena::v1::Action& message) {
  Action action;
  action.text = message.text();
  const std::vector<std::string> words = words_of(action.text);
  if (words.empty()) throw ParseError("an action with an empty text");
  action.verb_text = lower(words[0]);
  const Verb by_text = verb_of_word(action.verb_text);
  const Verb by_number = verb_of_number(message.verb());
  if (by_number != Verb::kOther && by_text != Verb::kOther && by_number != by_text) {
    throw ParseError("action " + quoted(action.text) + " has the verb " +
                     arena::v1::Verb_Name(message.verb()) + " but its text says " +
                     quoted(words[0]));
  }
  // The text names the verb when the number is unset or newer than this SDK (an unknown verb,
  // passed through as its text).
  action.verb = by_number != Verb::kOther ? by_number : by_text;
  if (action.verb != Verb::kOther) action.verb_text = verb_word(action.verb);
  for (const std::string& card : message.cards()) action.card_texts.push_back(card);

  size_t first_card = 1;  // where the text's cards begin, for a message without its cards field
  if (action.verb == Verb::kDeclare) {
    action.combination = message.combination();
    action.combination_text = combination_name(action.combination);
    if (action.combination_text.empty()) {
      // Unset, or a combination newer than this SDK: the text's second word names it.
      if (words.size() < 2) {
        throw ParseError("declaration " + quoted(action.text) + " names no combination");
      }
      action.combination_text = lower(words[1]);
      action.combination = combination_number(action.combination_text);
    }
    first_card = 2;
  }
  if (action.card_texts.empty() && action.verb != Verb::kOther) {
    for (size_t i = first_card; i < words.size(); ++i) action.card_texts.push_back(words[i]);
  }
  for (const std::string& card : action.card_texts) {
    if (action.verb == Verb::kOther) {
      try {
        action.cards.push_back(Card::parse(card));
      } catch (const ParseError&) {
        // An unknown verb's references are its own business: kept as text only.
      }
      continue;
    }
    try {
      action.cards.push_back(Card::parse(card));
    } catch (const ParseError& error) {
      throw ParseError("action " + quoted(action.text) + ": " + error.what());
    }
  }
  const size_t n = action.cards.size();
  if ((action.verb == Verb::kPlay || action.verb == Verb::kExchange) && n != 1) {
    throw ParseError("action " + quoted(action.text) + " must name exactly one card, names " +
                     std::to_string(n));
  }
  if (action.verb == Verb::kDone && n != 0) {
    throw ParseError("action " + quoted(action.text) + " must name no card, names " +
                     std::to_string(n));
  }
  return action;
}

ParsedRequest parse_request(const arena::v1::DecisionRequest& request) {
  ParsedRequest parsed;
  if (request.legal_actions_size() == 0) throw ParseError("it lists no legal action");
  for (int i = 0; i < request.legal_actions_size(); ++i) {
    try {
      parsed.legal.push_back(Action::from_message(request.legal_actions(i)));
    } catch (const ParseError& error) {
      throw ParseError("legal action " + std::to_string(i) + ": " + error.what());
    }
  }
  const arena::v1::Observation& view = request.observation();
  for (const std::string& card : view.hand()) {
    try {
      parsed.hand.push_back(Card::parse(card));
    } catch (const ParseError& error) {
      throw ParseError(std::string("observation.hand: ") + error.what());
    }
  }
  for (const arena::v1::PlayedCard& played : view.trick()) {
    try {
      parsed.trick.emplace_back(played.seat(), Card::parse(played.card()));
    } catch (const ParseError& error) {
      throw ParseError(std::string("observation.trick: ") + error.what());
    }
  }
  try {
    parsed.trump = parse_suit(view.trump());
  } catch (const ParseError& error) {
    throw ParseError(std::string("observation.trump: ") + error.what());
  }
  return parsed;
}

// --------------------------------------------------------------------------------------- the clock

std::chrono::steady_clock::time_point Clock::deadline() const {
  return received + std::chrono::milliseconds(budget_ms);
}

std::chrono::steady_clock::time_point Clock::limit() const {
  // The bank is sent in whole milliseconds: one more, as the referee may hold a fraction.
  return received +
         std::chrono::milliseconds(static_cast<int64_t>(budget_ms) + bank_ms + 1 + grace_ms);
}

int64_t Clock::remaining_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline() -
                                                               std::chrono::steady_clock::now())
      .count();
}

// ------------------------------------------------------------------------------------ the seed

std::string sha256(const std::string& data) {
  // FIPS 180-4, section 6.2.
  static constexpr std::array<uint32_t, 64> k = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
      0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
      0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
      0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
      0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
      0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
      0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
      0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
      0xc67178f2};
  std::array<uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  auto rotr = [](uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  std::string message = data;
  const uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  message += static_cast<char>(0x80);
  while (message.size() % 64 != 56) message += '\0';
  for (int i = 7; i >= 0; --i) message += static_cast<char>((bits >> (8 * i)) & 0xff);
  for (size_t block = 0; block < message.size(); block += 64) {
    std::array<uint32_t, 64> w{};
    for (int t = 0; t < 16; ++t) {
      w[t] = 0;
      for (int b = 0; b < 4; ++b) {
        w[t] = (w[t] << 8) | static_cast<unsigned char>(message[block + 4 * t + b]);
      }
    }
    for (int t = 16; t < 64; ++t) {
      const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; ++t) {
      const uint32_t t1 =
          hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[t] + w[t];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
  }
  std::string digest;
  for (uint32_t word : h) {
    for (int i = 3; i >= 0; --i) digest += static_cast<char>((word >> (8 * i)) & 0xff);
  }
  return digest;
}

namespace {
std::string kind_part(const std::string& card) { return card.substr(0, card.find('.')); }
}  // namespace

std::string game_seed_text(const std::string& variant, int seat, int game, int dealer,
                           const std::string& turn_up, const std::vector<std::string>& hand) {
  std::vector<std::string> kinds;
  for (const std::string& card : hand) kinds.push_back(kind_part(card));
  std::sort(kinds.begin(), kinds.end());  // std::string compares as plain bytes
  std::string joined;
  for (const std::string& kind : kinds) joined += (joined.empty() ? "" : " ") + kind;
  return "arena-game-seed/1|" + variant + "|" + std::to_string(seat) + "|" + std::to_string(game) +
         "|" + std::to_string(dealer) + "|" + kind_part(turn_up) + "|" + joined;
}

uint64_t game_seed(const std::string& variant, int seat, int game, int dealer,
                   const std::string& turn_up, const std::vector<std::string>& hand) {
  const std::string digest = sha256(game_seed_text(variant, seat, game, dealer, turn_up, hand));
  uint64_t seed = 0;
  for (int i = 0; i < 8; ++i) seed = (seed << 8) | static_cast<unsigned char>(digest[i]);
  return seed;
}

uint64_t request_seed(const arena::v1::DecisionRequest& request) {
  const arena::v1::Observation& view = request.observation();
  std::vector<std::string> hand(view.hand().begin(), view.hand().end());
  return game_seed(view.variant(), request.seat(), request.game(), view.dealer(), view.turn_up(),
                   hand);
}

std::vector<std::string> deal_log(const std::vector<std::string>& log) {
  for (size_t i = log.size(); i-- > 0;) {
    if (log[i].rfind("deal ", 0) == 0)
      return {log.begin() + static_cast<std::ptrdiff_t>(i), log.end()};
  }
  return log;
}

GameLogs::Game& GameLogs::on_request(const arena::v1::DecisionRequest& request, bool& first) {
  const auto key = std::make_pair(request.match_id(), request.game());
  auto found = games_.find(key);
  first = found == games_.end();
  if (first) {
    found = games_.emplace(key, Game{}).first;
    found->second.seed = request_seed(request);
  }
  found->second.log.insert(found->second.log.end(), request.events().begin(),
                           request.events().end());
  return found->second;
}

void GameLogs::end_game(const std::string& match_id, int game) {
  games_.erase(std::make_pair(match_id, game));
}

void GameLogs::end_match(const std::string& match_id) {
  for (auto it = games_.begin(); it != games_.end();) {
    it = it->first.first == match_id ? games_.erase(it) : std::next(it);
  }
}

// ------------------------------------------------------------------------------------ the session

Options parse_options(const std::vector<std::string>& args) {
  Options options;
  bool has_address = false, has_token = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string name = arg, value;
    bool inline_value = false;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inline_value = true;
    }
    if (name == "--help" || name == "-h") {
      options.help = true;
      continue;
    }
    if (name != "--address" && name != "--token") {
      throw SessionError(kExitUsage, "unknown option " + quoted(arg) +
                                         " (the options are --address HOST:PORT, --token TOKEN "
                                         "and --help)");
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) throw SessionError(kExitUsage, name + " needs a value");
      value = args[++i];
    }
    if (name == "--address") {
      options.address = value;
      has_address = true;
    } else {
      options.token = value;
      has_token = true;
    }
  }
  const char* env_address = std::getenv("ARENA_ADDRESS");
  const char* env_token = std::getenv("ARENA_TOKEN");
  if ((!has_address || options.address.empty()) && env_address != nullptr) {
    options.address = env_address;
  }
  if ((!has_token || options.token.empty()) && env_token != nullptr) options.token = env_token;
  return options;
}

namespace {

// What the session knows of its matches, for its error messages and for the bot's turns.
struct Session {
  std::map<std::string, arena::v1::Welcome>
      welcomes;                   // match id -> its Welcome, while it is played
  std::set<std::string> playing;  // matches welcomed and not over
  GameLogs games;
  int welcomed = 0;
  int matches_over = 0;
  bool heard = false;  // anything at all from the referee
};

// Cancel the call and collect its status, so that nothing of it outlives the session.
void drop(grpc::ClientContext& context,
          grpc::ClientReaderWriter<arena::v1::BotMessage, arena::v1::RefereeMessage>& stream) {
  context.TryCancel();
  stream.Finish();
}

}  // namespace

int play(Bot& bot, const std::string& address, const std::string& token) {
  if (address.empty()) {
    throw SessionError(kExitUsage,
                       "no referee address: pass --address HOST:PORT or set ARENA_ADDRESS");
  }
  if (token.empty())
    throw SessionError(kExitUsage, "no token: set ARENA_TOKEN (or pass --token TOKEN)");

  // HOST:PORT, or unix:PATH (the referee's socket inside the sandbox): gRPC dials either as it is.
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = arena::v1::BotGateway::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Play(&context);

  arena::v1::BotMessage hello;
  hello.mutable_hello()->set_token(token);
  hello.mutable_hello()->set_name(bot.name());
  hello.mutable_hello()->set_version(bot.version());
  hello.mutable_hello()->set_protocol_version(kProtocolVersion);
  stream->Write(hello);  // a failure shows in the first Read and the call's status

  Session session;
  std::string unsent;  // the request whose reply could not be written, for the error message
  arena::v1::RefereeMessage message;
  while (stream->Read(&message)) {
    session.heard = true;
    switch (message.body_case()) {
      case arena::v1::RefereeMessage::kRequest: {
        const auto received = std::chrono::steady_clock::now();
        const arena::v1::DecisionRequest& request = message.request();
        const std::string what =
            "request " + std::to_string(request.request_id()) + " of match " + request.match_id();
        ParsedRequest parsed;
        try {
          parsed = parse_request(request);
        } catch (const ParseError& error) {
          drop(context, *stream);
          throw SessionError(kExitConnection,
                             one_line("cannot read " + what + " from the referee at " + address +
                                      ": " + error.what()));
        }
        bool first = false;
        GameLogs::Game& game = session.games.on_request(request, first);
        auto welcome = session.welcomes.find(request.match_id());
        const arena::v1::Welcome* welcome_of =
            welcome == session.welcomes.end() ? nullptr : &welcome->second;
        Clock clock;
        clock.budget_ms = request.clock().budget_ms();
        clock.bank_ms = request.clock().bank_ms();
        clock.grace_ms = welcome_of != nullptr ? welcome_of->time_control().grace_ms() : 0;
        clock.received = received;
        std::string choice;
        try {
          if (first) bot.on_game_start(GameStart{request, game.seed});
          Turn turn{request,
                    request.observation(),
                    welcome_of,
                    std::move(parsed.legal),
                    std::move(parsed.hand),
                    std::move(parsed.trick),
                    request.seat(),
                    parsed.trump,
                    clock,
                    game.log,
                    game.seed};
          choice = bot.decide(turn);
        } catch (...) {
          drop(context, *stream);
          throw;
        }
        const auto took = std::chrono::steady_clock::now() - received;
        if (welcome_of != nullptr && received + took > clock.limit()) {
          // The referee has timed the seat out and ignores a late reply: not sent (after a match's
          // last game the referee may have ended the stream, and the write would fail it).
          std::cerr << bot.name() << ": " << what << " took "
                    << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                    << " ms, past its limit of "
                    << (static_cast<int64_t>(clock.budget_ms) + clock.bank_ms + 1 + clock.grace_ms)
                    << " ms (budget + bank + grace): timed out, the reply is not sent" << std::endl;
          break;
        }
        arena::v1::BotMessage reply;
        reply.mutable_reply()->set_request_id(request.request_id());
        reply.mutable_reply()->set_match_id(request.match_id());
        reply.mutable_reply()->set_action(choice);
        if (!stream->Write(reply) && unsent.empty()) unsent = what;  // the next Read says how
        break;
      }
      case arena::v1::RefereeMessage::kWelcome: {
        const arena::v1::Welcome& welcome = message.welcome();
        ++session.welcomed;
        session.playing.insert(welcome.match_id());
        session.welcomes[welcome.match_id()] = welcome;
        try {
          bot.on_welcome(welcome);
        } catch (...) {
          drop(context, *stream);
          throw;
        }
        break;
      }
      case arena::v1::RefereeMessage::kGameOver: {
        const arena::v1::GameOver& over = message.game_over();
        session.games.end_game(over.match_id(), over.game());
        try {
          bot.on_game_over(over);
        } catch (...) {
          drop(context, *stream);
          throw;
        }
        break;
      }
      case arena::v1::RefereeMessage::kMatchOver: {
        const arena::v1::MatchOver& over = message.match_over();
        ++session.matches_over;
        session.playing.erase(over.match_id());
        session.welcomes.erase(over.match_id());
        session.games.end_match(over.match_id());
        try {
          bot.on_match_over(over);
        } catch (...) {
          drop(context, *stream);
          throw;
        }
        break;
      }
      case arena::v1::RefereeMessage::kRefused: {
        const std::string reason = message.refused().reason();
        drop(context, *stream);
        throw SessionError(kExitRefused, one_line("the referee refused the bot: " + reason));
      }
      default:
        break;  // an event, or a body newer than this SDK: not for bots
    }
  }
  const grpc::Status status = stream->Finish();
  if (!status.ok()) {
    const std::string what =
        std::string(status_name(status.error_code())) + ": " + status.error_message();
    if (!session.heard) {
      if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
        throw SessionError(kExitConnection, one_line("cannot reach the referee at " + address +
                                                     ": " + status.error_message()));
      }
      throw SessionError(kExitConnection, one_line("the referee at " + address +
                                                   " ended the stream before a Welcome: " + what));
    }
    if (!unsent.empty() && !session.playing.empty()) {
      throw SessionError(kExitConnection, one_line("the stream to the referee at " + address +
                                                   " closed while the bot was deciding " + unsent +
                                                   "; the reply could not be sent (" + what + ")"));
    }
    if (!session.playing.empty()) {
      throw SessionError(kExitConnection,
                         one_line("the stream to the referee at " + address +
                                  " broke during match " + *session.playing.begin() + ": " + what));
    }
    if (session.matches_over == 0) {
      throw SessionError(kExitConnection,
                         one_line("the stream to the referee at " + address + " broke: " + what));
    }
    return session.matches_over;  // broken between matches, after the last one: no game affected
  }
  if (session.welcomed == 0) {
    throw SessionError(kExitConnection, "the referee at " + address +
                                            " ended the stream without a Welcome or Refused");
  }
  if (!session.playing.empty()) {
    throw SessionError(kExitConnection, "the referee at " + address +
                                            " ended the stream in the middle of match " +
                                            *session.playing.begin());
  }
  return session.matches_over;
}

int main_for(Bot& bot, int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  Options options;
  try {
    options = parse_options(args);
  } catch (const SessionError& error) {
    std::cerr << bot.name() << ": " << error.what() << std::endl;
    return error.exit_code();
  }
  if (options.help) {
    std::cout << "usage: " << (argc > 0 ? argv[0] : bot.name().c_str())
              << " [--address HOST:PORT] [--token TOKEN]\n"
              << "Bezique Arena bot '" << bot.name()
              << "'. The referee address and the seat's token come from these options, else from "
                 "ARENA_ADDRESS and ARENA_TOKEN (a bot the arena launches gets its token only from "
                 "ARENA_TOKEN).\n";
    return kExitOk;
  }
  try {
    play(bot, options.address, options.token);
    return kExitOk;
  } catch (const SessionError& error) {
    std::cerr << bot.name() << ": " << error.what() << std::endl;
    return error.exit_code();
  } catch (const std::exception& error) {
    std::cerr << bot.name() << ": " << one_line(error.what()) << "\n"
              << bot.name() << ": the bot's own code failed; stopping" << std::endl;
    return kExitBotError;
  } catch (...) {
    std::cerr << bot.name() << ": the bot's own code failed; stopping" << std::endl;
    return kExitBotError;
  }
}

}  // namespace arena_bot
