package arena

import (
	"fmt"
	"strings"

	"arenakit/arenapb"
)

// The verbs of version 1 of the protocol, as an action's text begins.
const (
	VerbPlay     = "play"     // "play QS": play a card to the trick
	VerbDeclare  = "declare"  // "declare royal-marriage KH QH", "declare carte-blanche"
	VerbExchange = "exchange" // "exchange 7H": the seven of trumps for the turn-up
	VerbDone     = "done"     // end a declaring turn
)

// The combinations a declaration names, with the points they score under the ordinary rules (and
// Rubicon's two of its own). Rubicon scores no seven of trumps.
var Combinations = map[string]int{
	"marriage":          20,
	"royal-marriage":    40,
	"plain-sequence":    150, // Rubicon
	"sequence":          250,
	"bezique":           40,
	"double-bezique":    500,
	"triple-bezique":    1500,
	"quadruple-bezique": 4500,
	"four-knaves":       40,
	"four-queens":       60,
	"four-kings":        80,
	"four-aces":         100,
	"seven-of-trumps":   10,
	"carte-blanche":     50, // Rubicon
}

// The protocol's enum names for the verbs and combinations the generated code knows.
var verbNames = map[arenapb.Verb]string{
	arenapb.Verb_VERB_PLAY:     VerbPlay,
	arenapb.Verb_VERB_DECLARE:  VerbDeclare,
	arenapb.Verb_VERB_EXCHANGE: VerbExchange,
	arenapb.Verb_VERB_DONE:     VerbDone,
}

// Action is one legal action of a request, read from its message: its exact Text (the only thing to
// reply with), its Verb, the Combination a declaration names and the Cards it names.
//
// A verb this SDK does not know (a later version of the rules may add one, such as "inquire") is no
// error: Verb is then the text's first word, Known() is false, Cards holds what of the rest reads as
// cards and Args the other words. Reply with its Text like any other.
type Action struct {
	Text        string   // the exact text form: reply with this
	Verb        string   // VerbPlay, VerbDeclare, VerbExchange, VerbDone, or the first word of a verb unknown here
	Combination string   // a declaration's combination ("royal-marriage"), else ""
	Cards       []Card   // the cards it names, in the text's order
	Args        []string // for a verb unknown here: the words after it that are not cards
}

// Known says whether the action's verb is one of version 1's (play, declare, exchange, done).
func (a Action) Known() bool {
	switch a.Verb {
	case VerbPlay, VerbDeclare, VerbExchange, VerbDone:
		return true
	}
	return false
}

// Score is the points a declaration (or the seven's exchange, which scores as its declaration)
// makes by itself under the ordinary table (Combinations); -1 for an action that is neither.
func (a Action) Score() int {
	switch a.Verb {
	case VerbDeclare:
		if points, ok := Combinations[a.Combination]; ok {
			return points
		}
		return 0 // a combination this SDK does not know
	case VerbExchange:
		return Combinations["seven-of-trumps"]
	}
	return -1
}

func (a Action) String() string { return a.Text }

// ParseAction reads one of a request's legal actions. The verb, combination and cards come from the
// message's structured fields where the generated code knows them, and are checked against its text
// (which is what the referee reads): a message whose fields contradict its text, or whose cards do
// not read as cards, is an error naming the action.
func ParseAction(msg *arenapb.Action) (Action, error) {
	if msg == nil {
		return Action{}, fmt.Errorf("an empty action")
	}
	text := msg.GetText()
	words := strings.Fields(text)
	if len(words) == 0 {
		return Action{}, fmt.Errorf("an action without text (verb %v)", msg.GetVerb())
	}
	first := strings.ToLower(words[0])
	verb, known := verbNames[msg.GetVerb()]
	if !known {
		// VERB_UNSPECIFIED or a verb newer than this SDK's stubs: the text says which.
		if isKnownVerb(first) {
			verb, known = first, true
		}
	}
	if !known {
		return unknownVerb(text, words, msg.GetCards()), nil
	}
	if first != verb {
		return Action{}, fmt.Errorf("action %q: its verb field says %s", text, verb)
	}
	action := Action{Text: text, Verb: verb}
	rest := words[1:]
	if verb == VerbDeclare {
		if len(rest) == 0 {
			return Action{}, fmt.Errorf("action %q: a declaration without its combination", text)
		}
		named := strings.ReplaceAll(strings.ToLower(rest[0]), "_", "-")
		action.Combination = named
		if c := msg.GetCombination(); c != arenapb.Combination_COMBINATION_UNSPECIFIED {
			if want, ok := combinationName(c); ok && want != named {
				return Action{}, fmt.Errorf("action %q: its combination field says %s", text, want)
			}
		}
		rest = rest[1:]
	}
	cardTexts := msg.GetCards()
	if len(cardTexts) == 0 {
		cardTexts = rest
	} else if len(cardTexts) != len(rest) {
		return Action{}, fmt.Errorf("action %q: its cards field names %d cards", text, len(cardTexts))
	}
	for _, t := range cardTexts {
		card, err := ParseCard(t)
		if err != nil {
			return Action{}, fmt.Errorf("action %q: %v", text, err)
		}
		action.Cards = append(action.Cards, card)
	}
	switch {
	case verb == VerbPlay && len(action.Cards) != 1,
		verb == VerbExchange && len(action.Cards) != 1:
		return Action{}, fmt.Errorf("action %q: %s names one card", text, verb)
	case verb == VerbDone && len(action.Cards) != 0:
		return Action{}, fmt.Errorf("action %q: done names no card", text)
	}
	return action, nil
}

// ParseActionText reads an action from its text alone (as the Action message's fields would say).
func ParseActionText(text string) (Action, error) {
	return ParseAction(&arenapb.Action{Text: text})
}

func isKnownVerb(word string) bool {
	return Action{Verb: word}.Known()
}

func unknownVerb(text string, words []string, cardTexts []string) Action {
	action := Action{Text: text, Verb: strings.ToLower(words[0])}
	for _, w := range words[1:] {
		card, err := ParseCard(w)
		if err != nil {
			action.Args = append(action.Args, w)
		} else if len(cardTexts) == 0 {
			action.Cards = append(action.Cards, card)
		}
	}
	for _, t := range cardTexts { // the message's own list, where it gives one
		if card, err := ParseCard(t); err == nil {
			action.Cards = append(action.Cards, card)
		}
	}
	return action
}

// combinationName is the text name of a Combination enum value ("COMBINATION_ROYAL_MARRIAGE" is
// "royal-marriage"); false for a value the generated code does not know.
func combinationName(c arenapb.Combination) (string, bool) {
	name, ok := arenapb.Combination_name[int32(c)]
	if !ok {
		return "", false
	}
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "COMBINATION_")), "_", "-"), true
}
