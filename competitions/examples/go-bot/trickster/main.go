// An example Go submission, "go-trickster": it declares the combination that scores most, exchanges
// the seven of trumps when it may, and otherwise plays its lowest card. Built with the arena's Go
// starter kit (see build.sh), whose package arenakit/arena is the SDK.
package main

import "arenakit/arena"

type trickster struct{}

func (trickster) Decide(turn *arena.Turn) (string, error) {
	var best *arena.Action
	for i, a := range turn.Legal {
		if a.Verb == arena.VerbDeclare &&
			(best == nil || arena.Combinations[a.Combination] > arena.Combinations[best.Combination]) {
			best = &turn.Legal[i]
		}
	}
	if best != nil {
		return best.Text, nil
	}
	for _, a := range turn.Legal {
		if a.Verb == arena.VerbExchange {
			return a.Text, nil
		}
	}
	for i, a := range turn.Legal {
		if a.Verb == arena.VerbPlay && len(a.Cards) == 1 &&
			(best == nil || a.Cards[0].Order() < best.Cards[0].Order()) {
			best = &turn.Legal[i]
		}
	}
	if best != nil {
		return best.Text, nil
	}
	return turn.Legal[0].Text, nil
}

func main() {
	arena.Main("go-trickster", "1", trickster{})
}
