// Package arena is a small SDK for Bezique Arena bots in Go: it dials the referee, presents the
// seat's token in a Hello, hands every DecisionRequest to the bot as a Turn (the observation, the
// legal actions parsed into verb, combination and cards, the clock and its deadline) and sends the
// bot's Reply, across games and matches, until the referee ends the stream.
//
// A bot implements Bot (one method, Decide) and calls Main from its main function:
//
//	func main() { arena.Main("mybot", "1", &MyBot{}) }
//
// The protocol is the one of proto/arena/wire/v1/bot.proto; its generated Go code is the package
// arenakit/arenapb, for the fields this package does not wrap (Turn.Observation is the message).
package arena

import (
	"fmt"
	"strconv"
	"strings"
)

// Ranks from low to high as the game orders them in a trick: the ten ranks between king and ace.
const Ranks = "789JQKTA"

// Suits as card texts spell them: spades, hearts, diamonds, clubs.
const Suits = "SHDC"

// Card is a card reference as the protocol writes it: "QS" (a copy of the queen of spades the seat
// holds and has not declared: undeclared copies of a kind are interchangeable) or "QS.2" (the
// physical copy of pack 2: every public card, and a declared card in its declarer's hand).
type Card struct {
	Rank byte // one of Ranks
	Suit byte // one of Suits
	Pack int  // the copy's pack number, 1 or more; 0 for an undeclared copy in the seat's hand
}

// ParseCard reads a card reference ("QS", "TD", "7H.1"). Letters may be of either case.
func ParseCard(text string) (Card, error) {
	kind, pack, dotted := strings.Cut(text, ".")
	if len(kind) != 2 {
		return Card{}, fmt.Errorf("not a card: %q (a card is a rank of %s and a suit of %s, e.g. QS or QS.2)", text, Ranks, Suits)
	}
	rank := upper(kind[0])
	suit := upper(kind[1])
	if strings.IndexByte(Ranks, rank) < 0 || strings.IndexByte(Suits, suit) < 0 {
		return Card{}, fmt.Errorf("not a card: %q (a card is a rank of %s and a suit of %s, e.g. QS or QS.2)", text, Ranks, Suits)
	}
	card := Card{Rank: rank, Suit: suit}
	if dotted {
		n, err := strconv.Atoi(pack)
		if err != nil || n < 1 || pack[0] == '+' {
			return Card{}, fmt.Errorf("not a card: %q (the pack number after the dot is 1 or more)", text)
		}
		card.Pack = n
	}
	return card, nil
}

func upper(b byte) byte {
	if 'a' <= b && b <= 'z' {
		return b - 'a' + 'A'
	}
	return b
}

// String gives the card's text, the same as the referee writes it.
func (c Card) String() string {
	if c.Pack > 0 {
		return fmt.Sprintf("%c%c.%d", c.Rank, c.Suit, c.Pack)
	}
	return c.Kind()
}

// Kind is the card's rank and suit without its pack number: "QS" for "QS.2".
func (c Card) Kind() string {
	return string([]byte{c.Rank, c.Suit})
}

// Order is the card's rank from 0 (seven) to 7 (ace), in the order of a trick (ten above king).
func (c Card) Order() int {
	return strings.IndexByte(Ranks, c.Rank)
}

// Brisque says whether the card is an ace or a ten, the cards that count in the tricks.
func (c Card) Brisque() bool {
	return c.Rank == 'A' || c.Rank == 'T'
}

// Public says whether the card is named by its copy (declared, or otherwise shown to all).
func (c Card) Public() bool {
	return c.Pack > 0
}
