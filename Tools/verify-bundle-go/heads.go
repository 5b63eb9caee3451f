package main

// jqc-proof-bundle/2: the map of stream heads (Schemas/ledger-format.md
// § The map of stream heads), checked apart from the /1 checks.

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

const completeFormat = "jqc-proof-bundle/2"

var (
	headSchema     = []field{{"stream_version", "integer"}, {"leaf", "string"}, {"proof", arrayOf{"string"}}}
	completeSchema = append(append([]field{}, bundleSchema...), field{"head", headSchema})
)

type headMember struct {
	streamVersion int64
	leaf          string
	proof         []string
}

func toHead(v any) *headMember {
	m := v.(map[string]any)
	return &headMember{m["stream_version"].(int64), m["leaf"].(string), stringList(m["proof"])}
}

// checkpointHeads is the root of the checkpoint's jqc-heads extension line,
// nil without one (the note was verified by openCheckpoint before).
func checkpointHeads(text string, key verifierKey, what string) ([]byte, error) {
	n, err := note.Open([]byte(text), note.VerifierList(key.verifier))
	if err != nil {
		return nil, fail("%s is not a signed note (C2SP signed-note)", what)
	}
	var heads []byte
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 3 {
		return nil, nil
	}
	for _, line := range lines[3:] {
		if line != "jqc-heads" && !strings.HasPrefix(line, "jqc-heads ") {
			continue
		}
		fields := strings.Split(line, " ")
		var raw []byte
		if len(fields) == 2 {
			raw, _ = b64(fields[1])
		}
		if heads != nil || len(raw) != 32 {
			return nil, fail("%s's jqc-heads line is not one base64 hash of 32 bytes", what)
		}
		heads = raw
	}
	return heads, nil
}

// headMapRoot combines the head's leaf with the siblings (root first).
func headMapRoot(stream []byte, version int64, leaf []byte, siblings [][]byte) []byte {
	if len(stream) != 16 || version < 1 || len(siblings) > 256 {
		return nil
	}
	path := sha256.Sum256(stream)
	buf := append([]byte{0x00}, stream...)
	buf = binary.BigEndian.AppendUint64(buf, uint64(version))
	h := sha256.Sum256(append(buf, leaf...))
	for depth := len(siblings) - 1; depth >= 0; depth-- {
		bit := (path[depth/8] >> (7 - uint(depth%8))) & 1
		pair := append([]byte{0x01}, h[:]...)
		pair = append(pair, siblings[depth]...)
		if bit == 1 {
			pair = append(append([]byte{0x01}, siblings[depth]...), h[:]...)
		}
		h = sha256.Sum256(pair)
	}
	return h[:]
}

// checkHead is step 7: the bundle's last record is the inspection's head in
// the checkpoint's map. It returns the verdict's second line.
func checkHead(b bundle) (string, error) {
	key, _ := parseKey(b.publicKey)
	size, _, err := openCheckpoint(b.checkpoint, key, "the checkpoint")
	if err != nil {
		return "", err
	}
	heads, err := checkpointHeads(b.checkpoint, key, "the checkpoint")
	if err != nil {
		return "", err
	}
	if heads == nil {
		return "", fail("the checkpoint carries no jqc-heads line: a %s bundle's head cannot be proven", completeFormat)
	}
	raw, _ := b64(b.records[len(b.records)-1].record)
	lastLeaf := sha256.Sum256(append([]byte{0x00}, raw...))
	last, _ := decodeRecord(raw)
	k := int64(last.version)
	leaf, err := b64Hash(b.head.leaf, "head.leaf")
	if err != nil {
		return "", err
	}
	var siblings [][]byte
	for i, text := range b.head.proof {
		h, err := b64Hash(text, "head.proof["+strconv.Itoa(i)+"]")
		if err != nil {
			return "", err
		}
		siblings = append(siblings, append([]byte{}, h[:]...))
	}
	if string(headMapRoot(last.stream, b.head.streamVersion, leaf[:], siblings)) != string(heads) {
		return "", fail("head is not in the checkpoint's map of stream heads (jqc-heads): it proves no head")
	}
	if b.head.streamVersion != k || string(leaf[:]) != string(lastLeaf[:]) {
		return "", fail("the inspection's head at this size is version %d, not version %d, the bundle's last: "+
			"version %d exists at this size", b.head.streamVersion, k, k+1)
	}
	return "complete: version " + strconv.Itoa(int(k)) + " is the inspection's last in the tree of " + plural(size, "record") +
		" (its head in the map of stream heads)", nil
}
