// Cosignatures on the bundle's checkpoint (C2SP tlog-cosignature,
// cosignature/v1), checked against the witnesses' keys the auditor gives.
// golang.org/x/mod/sumdb/note knows only Ed25519 note signatures (type
// 0x01), so the cosignature/v1 message and its Ed25519 signature are checked
// here with crypto/ed25519, as c2sp.org/tlog-cosignature defines them.
// Tools/verify-ledger's check_cosignatures makes the same checks, in the same
// order, with the same lines.
package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cosignerKey is a witness's verifier key: name+key id+base64(0x04 || key).
type cosignerKey struct {
	name   string
	keyID  uint32
	public []byte
}

func (k cosignerKey) described() string {
	return fmt.Sprintf("%s (key id %08x)", shown(k.name), k.keyID)
}

// repeatedFlag is a repeatable string flag.
type repeatedFlag []string

func (s *repeatedFlag) String() string     { return strings.Join(*s, ",") }
func (s *repeatedFlag) Set(v string) error { *s = append(*s, v); return nil }

func parseCosignerKey(text string) (cosignerKey, error) {
	name, rest, _ := strings.Cut(text, "+")
	id, blob, _ := strings.Cut(rest, "+")
	// Go's base64 skips line breaks; the other verifiers refuse them.
	raw, err := base64.StdEncoding.Strict().DecodeString(blob)
	if strings.ContainsAny(blob, "\r\n") {
		err = errors.New("line break")
	}
	keyID, hexErr := strconv.ParseUint(id, 16, 32)
	if err != nil || len(id) != 8 || hexErr != nil || !isKeyName(name) || len(raw) != 33 || raw[0] != 4 {
		return cosignerKey{}, fmt.Errorf(
			"%s is not an Ed25519 cosigner key (<name>+<key id>+<base64 of 0x04 and 32 key bytes>)", shown(text))
	}
	sum := sha256.Sum256(append([]byte(name+"\n"), raw...))
	if uint32(keyID) != binary.BigEndian.Uint32(sum[:4]) {
		return cosignerKey{}, fmt.Errorf("%s has a key id that does not match the key", shown(text))
	}
	return cosignerKey{name, uint32(keyID), raw[1:]}, nil
}

// witnessOptions reads --witness-key and --witness-quorum (default: all);
// the error is the UNREADABLE verdict.
func witnessOptions(texts []string, quorumText *string) ([]cosignerKey, int, error) {
	var keys []cosignerKey
	for _, text := range texts {
		key, err := parseCosignerKey(text)
		if err != nil {
			return nil, 0, errors.New("--witness-key " + err.Error())
		}
		for _, k := range keys {
			if k.name == key.name {
				return nil, 0, fmt.Errorf("--witness-key names the witness %s twice", shown(key.name))
			}
		}
		keys = append(keys, key)
	}
	if quorumText == nil {
		return keys, len(keys), nil
	}
	if len(keys) == 0 {
		return nil, 0, errors.New("--witness-quorum needs --witness-key (the witnesses whose cosignatures count)")
	}
	digits := *quorumText != "" && strings.Trim(*quorumText, "0123456789") == ""
	quorum, err := strconv.Atoi(*quorumText)
	if !digits || err != nil || quorum < 1 || quorum > len(keys) {
		return nil, 0, fmt.Errorf(
			"--witness-quorum must be a whole number from 1 to %d (the --witness-key given)", len(keys))
	}
	return keys, quorum, nil
}

func witnessesCounted(n int) string {
	if n == 1 {
		return "1 witness"
	}
	return fmt.Sprintf("%d witnesses", n)
}

// cosignatureTime is POSIX seconds as RFC 3339 UTC, or as a number past the year 9999.
func cosignatureTime(t uint64) string {
	if t > 253402300799 {
		return fmt.Sprintf("POSIX time %d", t)
	}
	return time.Unix(int64(t), 0).UTC().Format("2006-01-02T15:04:05Z")
}

// checkCosignatures says which of the given witnesses cosigned the bundle's
// checkpoint (already opened with the device's key); lines by other keys are
// ignored (signed-note). An error when one does not verify or the quorum is
// not met.
func checkCosignatures(text string, keys []cosignerKey, quorum int) (string, error) {
	split := strings.LastIndex(text, "\n\n")
	body := text[:split+1]
	newest := map[string]uint64{}
	for _, line := range strings.Split(text[split+2:len(text)-1], "\n") {
		name, blob, _ := strings.Cut(strings.TrimPrefix(line, "\u2014 "), " ")
		raw, _ := base64.StdEncoding.DecodeString(blob)
		var key *cosignerKey
		for i := range keys {
			if keys[i].name == name && len(raw) >= 4 && binary.BigEndian.Uint32(raw[:4]) == keys[i].keyID {
				key = &keys[i]
			}
		}
		if key == nil {
			continue
		}
		if len(raw) != 76 {
			return "", fail("the checkpoint carries a cosignature by %s that is not a cosignature/v1 (%d bytes, not 76)",
				key.described(), len(raw))
		}
		t := binary.BigEndian.Uint64(raw[4:12])
		message := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", t)), body...)
		if !ed25519.Verify(ed25519.PublicKey(key.public), message, raw[12:]) {
			return "", fail("the checkpoint carries a cosignature by %s that does not verify", key.described())
		}
		if old, seen := newest[key.name]; !seen || t > old {
			newest[key.name] = t
		}
	}
	var names []string
	for _, k := range keys {
		if t, ok := newest[k.name]; ok {
			names = append(names, fmt.Sprintf("%s at %s", shown(k.name), cosignatureTime(t)))
		}
	}
	count := fmt.Sprintf("%d of %s given", len(names), witnessesCounted(len(keys)))
	if len(names) == 0 {
		return "", fail("the checkpoint carries no cosignature by the %s given (quorum %d not met)",
			witnessesCounted(len(keys)), quorum)
	}
	if len(names) < quorum {
		return "", fail("the checkpoint is cosigned by %s only (%s, quorum %d not met)",
			strings.Join(names, ", "), count, quorum)
	}
	return fmt.Sprintf("cosigned by %s (%s, quorum %d met)", strings.Join(names, ", "), count, quorum), nil
}
