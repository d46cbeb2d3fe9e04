package main

import (
	"testing"

	"arenakit/arena"
	"arenakit/arenapb"
)

func turn(t *testing.T, obs *arenapb.Observation, log []string, texts ...string) *arena.Turn {
	t.Helper()
	turn := &arena.Turn{Seat: int(obs.GetSeat()), Observation: obs, Log: log}
	for _, text := range texts {
		a, err := arena.ParseActionText(text)
		if err != nil {
			t.Fatal(err)
		}
		turn.Legal = append(turn.Legal, a)
	}
	return turn
}

func decide(t *testing.T, tr *arena.Turn) string {
	t.Helper()
	text, err := (&Greedy{}).Decide(tr)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func TestDeclaresItsBest(t *testing.T) {
	obs := &arenapb.Observation{Variant: "two-handed", Phase: "declare", Trump: "H", TurnUp: "JH.1", StockSize: 20}
	for _, c := range []struct {
		legal []string
		want  string
	}{
		{[]string{"declare four-aces AS AH AD AC", "declare marriage KS QS", "done", "exchange 7H"}, "declare four-aces AS AH AD AC"},
		// The exchange scores as the seven's declaration, and brings the turn-up in.
		{[]string{"declare seven-of-trumps 7H", "done", "exchange 7H"}, "exchange 7H"},
		{[]string{"declare marriage KS QS", "done", "exchange 7H"}, "declare marriage KS QS"},
		{[]string{"declare bezique QS JD", "declare royal-marriage KH QH", "done"}, "declare bezique QS JD"},
		{[]string{"declare carte-blanche", "done"}, "declare carte-blanche"},
		{[]string{"done"}, "done"},
		// A verb it does not know is never chosen over one it does.
		{[]string{"done", "inquire"}, "done"},
	} {
		if got := decide(t, turn(t, obs, nil, c.legal...)); got != c.want {
			t.Errorf("%v: chose %q, want %q", c.legal, got, c.want)
		}
	}
}

func TestStockPlay(t *testing.T) {
	obs := &arenapb.Observation{Variant: "two-handed", Seat: 0, Trump: "H", TurnUp: "JH.1", StockSize: 20,
		Hand: []string{"7C", "AS", "KD", "QD", "8H", "9S"}}
	// Leading: a low plain card outside any combination (not the marriage KD QD, not the trump).
	lead := turn(t, obs, nil, "play 7C", "play 8H", "play 9S", "play AS", "play KD", "play QD")
	if got := decide(t, lead); got != "play 7C" {
		t.Errorf("lead: %q", got)
	}
	// Following a ten: win it with a card below a ten outside a combination, not the ace.
	obs.Trick = []*arenapb.PlayedCard{{Seat: 1, Card: "TS.1"}}
	follow := turn(t, obs, nil, "play 7C", "play 8H", "play 9S", "play AS", "play KD", "play QD")
	if got := decide(t, follow); got != "play 8H" {
		t.Errorf("follow a ten: %q", got)
	}
	// Following a seven: no brisque to win: throw the cheapest spare card.
	obs.Trick = []*arenapb.PlayedCard{{Seat: 1, Card: "7S.1"}}
	if got := decide(t, turn(t, obs, nil, "play 7C", "play AS", "play 9S")); got != "play 7C" {
		t.Errorf("follow a seven: %q", got)
	}
}

func TestLastTricks(t *testing.T) {
	obs := &arenapb.Observation{Variant: "two-handed", Seat: 0, Trump: "H", StockSize: 0,
		Trick: []*arenapb.PlayedCard{{Seat: 1, Card: "KS.1"}}}
	// Following: the cheapest card that wins.
	if got := decide(t, turn(t, obs, nil, "play 9S", "play TS", "play AS")); got != "play TS" {
		t.Errorf("follow: %q", got)
	}
	if got := decide(t, turn(t, obs, nil, "play 9S", "play 7S")); got != "play 7S" {
		t.Errorf("follow, cannot win: %q", got)
	}
	// Partners: the partner (seat 2) is winning: the cheapest.
	partners := &arenapb.Observation{Variant: "four-handed-partners", Seat: 0, Trump: "H", StockSize: 0,
		Trick: []*arenapb.PlayedCard{{Seat: 1, Card: "9S.1"}, {Seat: 2, Card: "AS.1"}, {Seat: 3, Card: "8S.1"}}}
	if got := decide(t, turn(t, partners, nil, "play 7S", "play TS")); got != "play 7S" {
		t.Errorf("partner winning: %q", got)
	}
	// Leading: the highest trump is sure to win once the higher ones are all seen.
	lead := &arenapb.Observation{Variant: "two-handed", Seat: 0, Trump: "H", StockSize: 0, Hand: []string{"TH", "9H", "7C"}}
	log := []string{"deal 1: seat 1 deals, turn-up 7H.1", "seat 1 plays AH.1", "seat 0 plays AH.2"}
	if got := decide(t, turn(t, lead, log, "play TH", "play 9H", "play 7C")); got != "play TH" {
		t.Errorf("lead the top trump: %q", got)
	}
	// Without the aces seen, no card is sure: the cheapest.
	if got := decide(t, turn(t, lead, log[:1], "play TH", "play 9H", "play 7C")); got != "play 7C" {
		t.Errorf("lead, nothing sure: %q", got)
	}
}

func TestWinningIndex(t *testing.T) {
	cards := func(texts ...string) []arena.Card {
		var out []arena.Card
		for _, text := range texts {
			c, err := arena.ParseCard(text)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
		return out
	}
	for _, c := range []struct {
		trick []string
		trump byte
		want  int
	}{
		{[]string{"KS", "TS"}, 'H', 1},   // the ten above the king
		{[]string{"AS", "7H"}, 'H', 1},   // a trump
		{[]string{"AS", "AS.2"}, 'H', 0}, // identical: the first played
		{[]string{"9S", "AD", "TS"}, 0, 2},
	} {
		if got := winningIndex(cards(c.trick...), c.trump); got != c.want {
			t.Errorf("%v trump %q: %d, want %d", c.trick, c.trump, got, c.want)
		}
	}
}

// Whatever it does not foresee, it answers a legal action.
func TestFallsBackToALegalAction(t *testing.T) {
	obs := &arenapb.Observation{Variant: "two-handed", StockSize: 3, Trick: []*arenapb.PlayedCard{{Seat: 1, Card: "??"}}}
	if got := decide(t, turn(t, obs, nil, "play 7C", "play 8C")); got != "play 7C" {
		t.Errorf("%q", got)
	}
}
