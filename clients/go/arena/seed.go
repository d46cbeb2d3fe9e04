package arena

import (
	"crypto/sha256"
	"encoding/binary"
	"sort"
	"strconv"
	"strings"

	"arenakit/arenapb"
)

// SeedVersion is the first field of the text GameSeed hashes.
const SeedVersion = "arena-game-seed/1"

// GameSeedText is the text GameSeed hashes:
// "arena-game-seed/1|VARIANT|SEAT|GAME|DEALER|TURN_UP|HAND", the turn-up and the hand's cards as
// kinds (pack numbers dropped), the hand sorted as plain byte strings and joined by single spaces,
// duplicates kept; no turn-up: empty.
func GameSeedText(variant string, seat, game, dealer int, turnUp string, hand []string) string {
	kinds := make([]string, len(hand))
	for i, card := range hand {
		kinds[i], _, _ = strings.Cut(card, ".")
	}
	sort.Strings(kinds)
	up, _, _ := strings.Cut(turnUp, ".")
	return strings.Join([]string{
		SeedVersion, variant, strconv.Itoa(seat), strconv.Itoa(game), strconv.Itoa(dealer), up,
		strings.Join(kinds, " "),
	}, "|")
}

// GameSeed is a game's seed for a bot's random numbers: the first 8 bytes of the SHA-256 of
// GameSeedText, big-endian; the same number the Python and JavaScript SDKs compute. It depends only
// on the deal, so a bot that draws its random numbers from it plays a deal the same way in every run,
// however many games its process has played before.
func GameSeed(variant string, seat, game, dealer int, turnUp string, hand []string) uint64 {
	sum := sha256.Sum256([]byte(GameSeedText(variant, seat, game, dealer, turnUp, hand)))
	return binary.BigEndian.Uint64(sum[:8])
}

// RequestSeed is GameSeed of a game's first DecisionRequest for the bot.
func RequestSeed(req *arenapb.DecisionRequest) uint64 {
	obs := req.GetObservation()
	return GameSeed(obs.GetVariant(), int(req.GetSeat()), int(req.GetGame()), int(obs.GetDealer()),
		obs.GetTurnUp(), obs.GetHand())
}
