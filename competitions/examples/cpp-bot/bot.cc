// An example C++ submission, "cpp-trickster": it declares the rarest combination it may (the
// higher a combination's number, the more it scores), exchanges the seven of trumps when it may,
// and otherwise plays its lowest card. Built with the arena's C++ starter kit (see build.sh).
#include <string>

#include "arena_bot.h"

using arena_bot::Action;
using arena_bot::Turn;
using arena_bot::Verb;

namespace {

class Trickster : public arena_bot::Bot {
 public:
  Trickster() : Bot("cpp-trickster", "1") {}

  std::string decide(const Turn& turn) override {
    const Action* best = nullptr;
    for (const Action& a : turn.legal) {
      if (a.verb == Verb::kDeclare && (best == nullptr || a.combination > best->combination))
        best = &a;
    }
    if (best != nullptr) return best->text;
    for (const Action& a : turn.legal) {
      if (a.verb == Verb::kExchange) return a.text;
    }
    for (const Action& a : turn.legal) {
      if (a.verb == Verb::kPlay && !a.cards.empty() &&
          (best == nullptr || a.cards[0].rank < best->cards[0].rank))
        best = &a;
    }
    return best != nullptr ? best->text : turn.legal.front().text;
  }
};

}  // namespace

int main(int argc, char** argv) {
  Trickster bot;
  return arena_bot::main_for(bot, argc, argv);
}
