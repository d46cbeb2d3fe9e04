package main

import (
	"strings"

	"arenakit/arena"
)

// Greedy declares the best combination it may, exchanges the seven of trumps, keeps its brisques and
// its combination cards while there is stock, and plays sensibly in the last tricks: the same plan
// as the Python SDK's greedy bot, read off the observation and the legal actions alone, so it plays
// every variant (two-handed, Polish, Rubicon, three- and four-handed, partners, consultation). When
// unsure it answers the first legal action: never anything else.
type Greedy struct{}

// packs per variant: how many copies of each card there are.
var packs = map[string]int{
	"two-handed": 2, "polish": 2, "three-handed": 3, "three-handed-consultation": 2,
	"four-handed": 4, "four-handed-partners": 4, "four-handed-consultation": 2, "rubicon": 4,
}

const (
	orderJack = 3 // arena.Ranks: 7 8 9 J Q K T A
	orderTen  = 6
	plainTen  = orderTen + 10 // the keep value of a ten that is not a trump
)

// Decide is the bot's answer: the text of one of turn.Legal.
func (g *Greedy) Decide(turn *arena.Turn) (string, error) {
	if choice, ok := choose(turn); ok {
		return choice.Text, nil
	}
	return turn.Legal[0].Text, nil
}

// choose is the greedy choice; false when it has none (a position it does not foresee).
func choose(turn *arena.Turn) (choice arena.Action, ok bool) {
	defer func() {
		if recover() != nil { // an unforeseen position: any legal action beats a crash
			ok = false
		}
	}()
	var plays []arena.Action
	for _, a := range turn.Legal {
		if a.Verb == arena.VerbPlay {
			plays = append(plays, a)
		}
	}
	if len(plays) == 0 {
		return declaring(turn.Legal)
	}
	ctx := newContext(turn)
	var trick []arena.Card
	var seats []int
	for _, p := range turn.Observation.GetTrick() {
		card, err := arena.ParseCard(p.GetCard())
		if err != nil {
			return arena.Action{}, false
		}
		trick = append(trick, card)
		seats = append(seats, int(p.GetSeat()))
	}
	switch {
	case ctx.inStock && len(trick) > 0:
		return ctx.stockFollow(trick, seats, plays), true
	case ctx.inStock:
		return ctx.stockLead(plays), true
	case len(trick) > 0:
		return ctx.lastFollow(trick, seats, plays), true
	default:
		return ctx.lastLead(turn, plays), true
	}
}

// declaring: the best-scoring declaration; the seven's exchange rather than anything worth no more
// (it scores as much as declaring the seven and brings the turn-up into the hand); else done.
func declaring(legal []arena.Action) (arena.Action, bool) {
	var best, exchange, done *arena.Action
	for i := range legal {
		a := &legal[i]
		switch a.Verb {
		case arena.VerbDeclare:
			if best == nil || a.Score() > best.Score() ||
				(a.Score() == best.Score() && len(a.Cards) < len(best.Cards)) {
				best = a
			}
		case arena.VerbExchange:
			if exchange == nil {
				exchange = a
			}
		case arena.VerbDone:
			done = a
		}
	}
	switch {
	case best != nil && best.Score() > arena.Combinations["seven-of-trumps"]:
		return *best, true
	case exchange != nil:
		return *exchange, true
	case best != nil:
		return *best, true
	case done != nil:
		return *done, true
	}
	return arena.Action{}, false
}

// context is what the bot reads off one observation.
type context struct {
	seat      int
	partner   int  // the partner's seat (four-handed partners), else -1
	trump     byte // 0: none yet (Rubicon)
	inStock   bool
	hand      map[string]int // kind -> copies in hand
	bezique   [2]string      // the two kinds of a bezique
	sevenOpen bool           // the seven of trumps can still be exchanged or declared for 10
	packs     int
	rubicon   bool
}

func newContext(turn *arena.Turn) *context {
	obs := turn.Observation
	c := &context{seat: turn.Seat, partner: -1, inStock: obs.GetStockSize() > 0, hand: map[string]int{},
		packs: packs[obs.GetVariant()], rubicon: obs.GetVariant() == "rubicon"}
	if c.packs == 0 {
		c.packs = 4 // a variant unknown here: count high, so that no card is thought the last
	}
	if obs.GetVariant() == "four-handed-partners" {
		c.partner = (c.seat + 2) % 4
	}
	if t := obs.GetTrump(); len(t) == 1 {
		c.trump = t[0]
	}
	for _, text := range obs.GetHand() {
		if card, err := arena.ParseCard(text); err == nil {
			c.hand[card.Kind()]++
		}
	}
	c.bezique = [2]string{"QS", "JD"}
	if obs.GetOptions()["bezique_cards"] == "trump-dependent" && (c.trump == 'S' || c.trump == 'D') {
		c.bezique = [2]string{"QC", "JH"}
	}
	c.sevenOpen = !c.rubicon && obs.GetTurnUp() != ""
	return c
}

func (c *context) stockFollow(trick []arena.Card, seats []int, plays []arena.Action) arena.Action {
	winner := seats[winningIndex(trick, c.trump)]
	brisque := false
	for _, card := range trick {
		brisque = brisque || card.Brisque()
	}
	if winner != c.partner && brisque {
		// Win a trick holding a brisque if it costs no ace or ten and no card of a combination; else
		// with a low trump worth less than a plain ten.
		winners := c.filter(plays, func(card arena.Card) bool {
			return beats(card, trick, c.trump) && card.Order() < orderTen && !c.inCombination(card)
		})
		if len(winners) == 0 {
			winners = c.filter(plays, func(card arena.Card) bool {
				return beats(card, trick, c.trump) && card.Order() < orderTen && c.keepValue(card) < plainTen
			})
		}
		if len(winners) > 0 {
			return c.cheapest(winners)
		}
	}
	return c.throw(plays)
}

// stockLead: a low card that is neither a trump nor a brisque nor part of a possible combination.
func (c *context) stockLead(plays []arena.Action) arena.Action {
	low := c.filter(plays, func(card arena.Card) bool { return card.Order() < orderTen })
	plain := c.filter(low, func(card arena.Card) bool { return card.Suit != c.trump && !c.inCombination(card) })
	switch {
	case len(plain) > 0:
		return c.cheapest(plain)
	case len(low) > 0:
		return c.cheapest(low)
	}
	return c.cheapest(plays)
}

func (c *context) throw(plays []arena.Action) arena.Action {
	spare := c.filter(plays, func(card arena.Card) bool { return card.Order() < orderTen && !c.inCombination(card) })
	if len(spare) > 0 {
		return c.cheapest(spare)
	}
	return c.cheapest(plays)
}

// lastFollow: the cheapest card that wins if one does (unless the partner is winning); else the
// cheapest.
func (c *context) lastFollow(trick []arena.Card, seats []int, plays []arena.Action) arena.Action {
	if seats[winningIndex(trick, c.trump)] == c.partner {
		return c.cheapest(plays)
	}
	winners := c.filter(plays, func(card arena.Card) bool { return beats(card, trick, c.trump) })
	if len(winners) > 0 {
		return c.cheapest(winners)
	}
	return c.cheapest(plays)
}

// lastLead: a card sure to win (the highest trump left), else one likely to (the highest card left
// of a plain suit), else the cheapest.
func (c *context) lastLead(turn *arena.Turn, plays []arena.Action) arena.Action {
	unseen := c.unseen(turn)
	tops := c.filter(plays, func(card arena.Card) bool { return isTop(card, unseen) })
	var best *arena.Action
	for i := range tops {
		a := &tops[i]
		card, bestCard := a.Cards[0], arena.Card{}
		if best != nil {
			bestCard = best.Cards[0]
		}
		trumpA, trumpB := card.Suit == c.trump, best != nil && bestCard.Suit == c.trump
		switch {
		case best == nil,
			trumpA && !trumpB,
			trumpA == trumpB && card.Order() > bestCard.Order(),
			trumpA == trumpB && card.Order() == bestCard.Order() && c.keepValue(card) < c.keepValue(bestCard):
			best = a
		}
	}
	if best != nil {
		return *best
	}
	return c.cheapest(plays)
}

// unseen counts the copies of each kind neither in the bot's hand nor played in this deal.
func (c *context) unseen(turn *arena.Turn) map[string]int {
	gone := map[string]int{}
	for kind, n := range c.hand {
		gone[kind] += n
	}
	log := turn.Log
	for i := len(log) - 1; i >= 0; i-- {
		if strings.HasPrefix(log[i], "deal ") {
			log = log[i:]
			break
		}
	}
	for _, entry := range log {
		words := strings.Fields(entry)
		if len(words) == 4 && words[0] == "seat" && words[2] == "plays" {
			if card, err := arena.ParseCard(words[3]); err == nil {
				gone[card.Kind()]++
			}
		}
	}
	unseen := map[string]int{}
	for _, r := range []byte(arena.Ranks) {
		for _, s := range []byte(arena.Suits) {
			kind := string([]byte{r, s})
			if n := c.packs - gone[kind]; n > 0 {
				unseen[kind] = n
			}
		}
	}
	return unseen
}

// isTop: no higher card of its suit is left anywhere but in the bot's own hand.
func isTop(card arena.Card, unseen map[string]int) bool {
	for order := card.Order() + 1; order < len(arena.Ranks); order++ {
		if unseen[string([]byte{arena.Ranks[order], card.Suit})] > 0 {
			return false
		}
	}
	return true
}

func (c *context) filter(actions []arena.Action, keep func(arena.Card) bool) []arena.Action {
	var out []arena.Action
	for _, a := range actions {
		if len(a.Cards) == 1 && keep(a.Cards[0]) {
			out = append(out, a)
		}
	}
	return out
}

// cheapest: the action whose card the bot would least rather keep (the first of equals).
func (c *context) cheapest(actions []arena.Action) arena.Action {
	best := actions[0]
	for _, a := range actions[1:] {
		if c.keepValue(a.Cards[0]) < c.keepValue(best.Cards[0]) {
			best = a
		}
	}
	return best
}

func (c *context) inCombination(card arena.Card) bool { return c.combinationValue(card) > 0 }

// combinationValue: how much a card may still be worth in a combination (0: nothing).
func (c *context) combinationValue(card arena.Card) int {
	kind := card.Kind()
	value := 0
	if card.Rank == 'K' || card.Rank == 'Q' {
		mate := "Q"
		if card.Rank == 'Q' {
			mate = "K"
		}
		if c.hand[mate+string(card.Suit)] > 0 {
			value += 4 // a marriage in hand
		} else {
			value += 2 // one that may still come
		}
	}
	for i, b := range c.bezique {
		if kind == b {
			if c.hand[c.bezique[1-i]] > 0 {
				value += 6
			} else {
				value += 3
			}
		}
	}
	if card.Suit == c.trump && card.Order() >= orderJack {
		value += 3 // the trump sequence
	}
	if strings.IndexByte("AKQJ", card.Rank) >= 0 {
		same := 0
		for k, n := range c.hand {
			if k[0] == card.Rank {
				same += n
			}
		}
		if same >= 2 {
			value += same // a four of a kind growing
		}
	}
	if card.Rank == '7' && card.Suit == c.trump && c.sevenOpen {
		value += 8
	}
	if card.Public() { // already declared: it has scored once
		value -= 3
		if value < 0 {
			value = 0
		}
	}
	return value
}

// keepValue: how much the bot would rather keep a card: rank, brisque, trump, combinations.
func (c *context) keepValue(card arena.Card) int {
	value := card.Order()
	if card.Brisque() {
		value += 10
	}
	if card.Suit == c.trump {
		value += 6
	}
	if c.inStock {
		value += c.combinationValue(card)
	}
	return value
}

// winningIndex: the card winning the trick so far: the highest trump, else the highest of the suit
// led; between identical cards the first played.
func winningIndex(trick []arena.Card, trump byte) int {
	best := 0
	for i := 1; i < len(trick); i++ {
		c, b := trick[i], trick[best]
		if (c.Suit == b.Suit && c.Order() > b.Order()) || (c.Suit != b.Suit && c.Suit == trump) {
			best = i
		}
	}
	return best
}

// beats: whether playing the card would take the lead of the trick.
func beats(card arena.Card, trick []arena.Card, trump byte) bool {
	b := trick[winningIndex(trick, trump)]
	if card.Suit == b.Suit {
		return card.Order() > b.Order()
	}
	return card.Suit == trump
}
