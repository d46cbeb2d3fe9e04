// The C++ kit's example bot, "cpp-greedy": declares the best combination it may, exchanges the
// seven of trumps, keeps its brisques and the cards of its possible combinations while there is
// stock, and in the last tricks wins cheaply or leads the cards sure to win. It looks one decision
// ahead and needs nothing but the observation and the legal actions, so it plays every variant
// (two-handed, Polish, Rubicon, three- and four-handed, partners, consultation). It answers only
// the text of one of the legal actions; an action with a verb it does not know is never its first
// choice.
#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "arena_bot.h"

using arena_bot::Action;
using arena_bot::Card;
using arena_bot::Turn;
using arena_bot::Verb;

namespace {

// Points per combination number (arena::v1::Combination): the ordinary rules' table, and Rubicon's
// (no seven of trumps; plain sequence 150, carte blanche 50). Unknown numbers score 0.
int combination_points(int combination, bool rubicon) {
  static const std::map<int, int> ordinary = {
      {arena::v1::COMBINATION_MARRIAGE, 20},
      {arena::v1::COMBINATION_ROYAL_MARRIAGE, 40},
      {arena::v1::COMBINATION_SEQUENCE, 250},
      {arena::v1::COMBINATION_BEZIQUE, 40},
      {arena::v1::COMBINATION_DOUBLE_BEZIQUE, 500},
      {arena::v1::COMBINATION_TRIPLE_BEZIQUE, 1500},
      {arena::v1::COMBINATION_QUADRUPLE_BEZIQUE, 4500},
      {arena::v1::COMBINATION_FOUR_KNAVES, 40},
      {arena::v1::COMBINATION_FOUR_QUEENS, 60},
      {arena::v1::COMBINATION_FOUR_KINGS, 80},
      {arena::v1::COMBINATION_FOUR_ACES, 100},
      {arena::v1::COMBINATION_SEVEN_OF_TRUMPS, 10},
  };
  if (rubicon) {
    if (combination == arena::v1::COMBINATION_SEVEN_OF_TRUMPS) return 0;
    if (combination == arena::v1::COMBINATION_PLAIN_SEQUENCE) return 150;
    if (combination == arena::v1::COMBINATION_CARTE_BLANCHE) return 50;
  }
  auto found = ordinary.find(combination);
  return found == ordinary.end() ? 0 : found->second;
}

// Physical packs shuffled together, per variant (4 for one this bot does not know: the most, so
// that it never thinks a card is gone when it is not).
int packs_of(const std::string& variant) {
  if (variant == "two-handed" || variant == "polish" || variant == "three-handed-consultation" ||
      variant == "four-handed-consultation") {
    return 2;
  }
  if (variant == "three-handed") return 3;
  return 4;
}

// What the bot reads off one turn.
struct Context {
  int seat = 0;
  int trump = -1;  // -1: none yet (Rubicon)
  bool rubicon = false;
  bool in_stock = false;
  std::vector<int> hand_kinds;
  std::array<int, 2> bezique{};  // the two kinds of a bezique
  bool seven_open = false;       // the seven of trumps may still be exchanged or declared for 10
  int partner = -1;              // four-handed partners: the other seat of the side
};

Context context_of(const Turn& turn) {
  Context ctx;
  ctx.seat = turn.seat;
  ctx.trump = turn.trump;
  ctx.rubicon = turn.view.variant() == "rubicon";
  ctx.in_stock = turn.view.stock_size() > 0;
  for (const Card& card : turn.hand) ctx.hand_kinds.push_back(card.kind());
  // QS + JD; with the option bezique_cards = trump-dependent, QC + JH when spades or diamonds are
  // trumps.
  ctx.bezique = {arena_bot::kSpades * 8 + arena_bot::kQueen,
                 arena_bot::kDiamonds * 8 + arena_bot::kJack};
  auto option = turn.view.options().find("bezique_cards");
  if (option != turn.view.options().end() && option->second == "trump-dependent" &&
      (ctx.trump == arena_bot::kSpades || ctx.trump == arena_bot::kDiamonds)) {
    ctx.bezique = {arena_bot::kClubs * 8 + arena_bot::kQueen,
                   arena_bot::kHearts * 8 + arena_bot::kJack};
  }
  ctx.seven_open = !ctx.rubicon && !turn.view.turn_up().empty();
  if (turn.view.variant() == "four-handed-partners") ctx.partner = (turn.seat + 2) % 4;
  return ctx;
}

int count_kind(const std::vector<int>& kinds, int kind) {
  return static_cast<int>(std::count(kinds.begin(), kinds.end(), kind));
}

// How much a card may still be worth in a combination (0: nothing).
int combination_value(const Card& card, const Context& ctx) {
  const int kind = card.kind();
  const std::vector<int>& hand = ctx.hand_kinds;
  int value = 0;
  if (card.rank == arena_bot::kKing || card.rank == arena_bot::kQueen) {
    const int mate =
        card.suit * 8 + (card.rank == arena_bot::kKing ? arena_bot::kQueen : arena_bot::kKing);
    value += count_kind(hand, mate) > 0 ? 4 : 2;  // a marriage in hand, or one that may still come
  }
  if (kind == ctx.bezique[0] || kind == ctx.bezique[1]) {
    const int other = kind == ctx.bezique[0] ? ctx.bezique[1] : ctx.bezique[0];
    value += count_kind(hand, other) > 0 ? 6 : 3;
  }
  if (card.suit == ctx.trump && card.rank >= arena_bot::kJack) value += 3;  // the trump sequence
  if (card.rank >= arena_bot::kJack && card.rank != arena_bot::kTen) {
    int same = 0;
    for (int k : hand) same += (k & 7) == card.rank ? 1 : 0;
    if (same >= 2) value += same;  // a four of a kind growing
  }
  if (card.rank == arena_bot::kSeven && card.suit == ctx.trump && ctx.seven_open) value += 8;
  if (card.pack != 0) value = std::max(0, value - 3);  // declared already: it has scored once
  return value;
}

// How much the bot would rather keep a card: rank, brisque, trump, combinations.
int keep_value(const Card& card, const Context& ctx) {
  int value = card.rank;
  if (card.brisque()) value += 10;
  if (card.suit == ctx.trump) value += 6;
  if (ctx.in_stock) value += combination_value(card, ctx);
  return value;
}

// The card winning the trick so far: the highest trump, else the highest of the suit led; between
// identical cards the first played.
size_t winning_index(const std::vector<Card>& trick, int trump) {
  size_t best = 0;
  for (size_t i = 1; i < trick.size(); ++i) {
    const Card& c = trick[i];
    const Card& b = trick[best];
    if ((c.suit == b.suit && c.rank > b.rank) || (c.suit != b.suit && c.suit == trump)) best = i;
  }
  return best;
}

bool beats(const Card& card, const std::vector<Card>& trick, int trump) {
  const Card& best = trick[winning_index(trick, trump)];
  if (card.suit == best.suit) return card.rank > best.rank;
  return card.suit == trump;
}

class GreedyBot : public arena_bot::Bot {
 public:
  GreedyBot() : Bot("cpp-greedy", "1") {}

  std::string decide(const Turn& turn) override {
    const Action* choice = choose(turn);
    return (choice != nullptr ? *choice : turn.legal.front()).text;
  }

 private:
  const Action* choose(const Turn& turn) {
    std::vector<const Action*> plays;
    for (const Action& action : turn.legal) {
      if (action.verb == Verb::kPlay) plays.push_back(&action);
    }
    if (plays.empty()) return declaring(turn);
    const Context ctx = context_of(turn);
    std::vector<Card> trick;
    int winner_seat = -1;
    for (const auto& played : turn.trick) trick.push_back(played.second);
    if (!trick.empty()) winner_seat = turn.trick[winning_index(trick, ctx.trump)].first;
    const bool partner_wins = winner_seat >= 0 && winner_seat == ctx.partner;
    if (ctx.in_stock) {
      if (!trick.empty()) return stock_follow(ctx, trick, partner_wins, plays);
      return stock_lead(ctx, plays);
    }
    if (!trick.empty()) return last_follow(ctx, trick, partner_wins, plays);
    return last_lead(turn, ctx, plays);
  }

  // The best-scoring declaration; the exchange of the seven before a declaration worth no more than
  // the seven; then done; an action of a verb this bot does not know only when nothing else is
  // left.
  const Action* declaring(const Turn& turn) {
    const bool rubicon = turn.view.variant() == "rubicon";
    const Action* best = nullptr;
    const Action* exchange = nullptr;
    const Action* done = nullptr;
    for (const Action& action : turn.legal) {
      if (action.verb == Verb::kDeclare) {
        const int points = combination_points(action.combination, rubicon);
        // On equal points, fewer cards: they leave more cards free for later declarations.
        if (best == nullptr || points > combination_points(best->combination, rubicon) ||
            (points == combination_points(best->combination, rubicon) &&
             action.cards.size() < best->cards.size())) {
          best = &action;
        }
      } else if (action.verb == Verb::kExchange && exchange == nullptr) {
        exchange = &action;
      } else if (action.verb == Verb::kDone && done == nullptr) {
        done = &action;
      }
    }
    const int seven = combination_points(arena::v1::COMBINATION_SEVEN_OF_TRUMPS, rubicon);
    if (best != nullptr && combination_points(best->combination, rubicon) > seven) return best;
    // The exchange scores as much as declaring the seven and brings the turn-up into the hand.
    if (exchange != nullptr) return exchange;
    if (best != nullptr) return best;
    return done;  // null: the first legal action
  }

  // Win a trick holding a brisque if it costs no ace or ten; else throw the cheapest spare card.
  const Action* stock_follow(const Context& ctx, const std::vector<Card>& trick, bool partner_wins,
                             const std::vector<const Action*>& plays) {
    const bool brisque_led =
        std::any_of(trick.begin(), trick.end(), [](const Card& c) { return c.brisque(); });
    if (!partner_wins && brisque_led) {
      std::vector<const Action*> winners;
      for (const Action* a : plays) {
        const Card& c = a->cards[0];
        if (beats(c, trick, ctx.trump) && !c.brisque() && combination_value(c, ctx) == 0) {
          winners.push_back(a);
        }
      }
      if (winners
              .empty()) {  // a low trump of a possible sequence may still be worth less than a ten
        for (const Action* a : plays) {
          const Card& c = a->cards[0];
          if (beats(c, trick, ctx.trump) && !c.brisque() &&
              keep_value(c, ctx) < arena_bot::kTen + 10) {
            winners.push_back(a);
          }
        }
      }
      if (!winners.empty()) return cheapest(winners, ctx);
    }
    return throw_card(ctx, plays);
  }

  // Lead a low card that is neither a trump nor a brisque nor part of a possible combination.
  const Action* stock_lead(const Context& ctx, const std::vector<const Action*>& plays) {
    std::vector<const Action*> low, plain;
    for (const Action* a : plays) {
      const Card& c = a->cards[0];
      if (c.brisque()) continue;
      low.push_back(a);
      if (c.suit != ctx.trump && combination_value(c, ctx) == 0) plain.push_back(a);
    }
    return cheapest(!plain.empty() ? plain : !low.empty() ? low : plays, ctx);
  }

  const Action* throw_card(const Context& ctx, const std::vector<const Action*>& plays) {
    std::vector<const Action*> spare;
    for (const Action* a : plays) {
      const Card& c = a->cards[0];
      if (!c.brisque() && combination_value(c, ctx) == 0) spare.push_back(a);
    }
    return cheapest(!spare.empty() ? spare : plays, ctx);
  }

  // The last tricks: the cheapest card that wins if one does (unless a partner is winning); else
  // the cheapest.
  const Action* last_follow(const Context& ctx, const std::vector<Card>& trick, bool partner_wins,
                            const std::vector<const Action*>& plays) {
    if (partner_wins) return cheapest(plays, ctx);
    std::vector<const Action*> winners;
    for (const Action* a : plays) {
      if (beats(a->cards[0], trick, ctx.trump)) winners.push_back(a);
    }
    return cheapest(!winners.empty() ? winners : plays, ctx);
  }

  // A card sure to win (the highest trump left), else one likely to win (the highest card left of a
  // plain suit), else the cheapest card.
  const Action* last_lead(const Turn& turn, const Context& ctx,
                          const std::vector<const Action*>& plays) {
    std::array<int, 32> unseen;
    unseen.fill(packs_of(turn.view.variant()));
    for (int kind : ctx.hand_kinds) --unseen[kind];
    for (const std::string& entry : arena_bot::deal_log(turn.log)) {
      // "seat 0 plays JH.1"
      const size_t at = entry.find(" plays ");
      if (entry.rfind("seat ", 0) != 0 || at == std::string::npos) continue;
      try {
        --unseen[Card::parse(entry.substr(at + 7)).kind()];
      } catch (const arena_bot::ParseError&) {
        continue;
      }
    }
    auto is_top = [&unseen](const Card& c) {
      for (int rank = c.rank + 1; rank < 8; ++rank) {
        if (unseen[c.suit * 8 + rank] > 0) return false;
      }
      return true;
    };
    const Action* sure = nullptr;
    const Action* top = nullptr;
    for (const Action* a : plays) {
      const Card& c = a->cards[0];
      if (!is_top(c)) continue;
      if (c.suit == ctx.trump && (sure == nullptr || c.rank > sure->cards[0].rank)) sure = a;
      if (top == nullptr || c.rank > top->cards[0].rank ||
          (c.rank == top->cards[0].rank && keep_value(c, ctx) < keep_value(top->cards[0], ctx))) {
        top = a;
      }
    }
    if (sure != nullptr) return sure;
    if (top != nullptr) return top;
    return cheapest(plays, ctx);
  }

  static const Action* cheapest(const std::vector<const Action*>& actions, const Context& ctx) {
    const Action* best = nullptr;
    for (const Action* a : actions) {
      if (best == nullptr || keep_value(a->cards[0], ctx) < keep_value(best->cards[0], ctx))
        best = a;
    }
    return best;
  }
};

}  // namespace

int main(int argc, char** argv) {
  GreedyBot bot;
  return arena_bot::main_for(bot, argc, argv);
}
