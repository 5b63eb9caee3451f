// verify-bundle-go checks a proof bundle from `jqc prove` with code nobody on
// this project wrote for the cryptography: Go's checksum-database packages
// golang.org/x/mod/sumdb/tlog (the RFC 9162 tree, its inclusion and
// consistency proofs) and golang.org/x/mod/sumdb/note (C2SP signed notes with
// Ed25519). The bundle's JSON and the CBOR records are read here, strictly;
// Schemas/ledger-format.md § Proof bundles is the spec. Tools/verify-ledger
// --bundle checks the same things in the same order and prints the same
// verdict lines; a change here is made there too.
//
// usage: verify-bundle-go [--key VKEY] [--checkpoint TRUSTED] [--witness-key VKEY]... [--witness-quorum N] BUNDLE.json
// exit status: 0 the bundle verifies, 1 it does not, 2 unreadable input
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const (
	bundleFormat = "jqc-proof-bundle/1"
	maxDepth     = 64
	notProven    = "not proven: that the inspection had no version after the last one shown"
)

// unreadable: the input is not a bundle's JSON (exit status 2).
type unreadable struct{ verdict, detail string }

func (u *unreadable) Error() string { return u.verdict }

// notVerified: the bundle is well formed and does not verify (exit status 1).
type notVerified struct{ verdict string }

func (n *notVerified) Error() string { return n.verdict }

func fail(format string, args ...any) error { return &notVerified{fmt.Sprintf(format, args...)} }

func refuse(format string, args ...any) error {
	return &unreadable{verdict: fmt.Sprintf(format, args...)}
}

// shown makes a string from the input safe to print: printable ASCII as it is,
// anything else as \u{hex}; at most limit characters, then an ellipsis.
func shown(text string) string {
	const limit = 64
	var b strings.Builder
	i := 0
	for _, c := range text {
		if i == limit {
			b.WriteString("...")
			break
		}
		i++
		if c >= ' ' && c <= '~' && c != '"' && c != '\\' {
			b.WriteRune(c)
		} else {
			fmt.Fprintf(&b, "\\u{%x}", c)
		}
	}
	return b.String()
}

func asciiLower(text string) string {
	b := []byte(text)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

func plural(n int64, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// ---- JSON, walked token by token so that repeated and case-variant member
// names are seen (encoding/json's decoding into a struct matches names
// case-insensitively and keeps the last of a repeated one).

type member struct {
	name  string
	value any
}

// object is a JSON object as its members in order.
type object []member

func (o object) get(name string) (any, bool) {
	for _, m := range o {
		if m.name == name {
			return m.value, true
		}
	}
	return nil, false
}

var errNotJSON = errors.New("the file is not well-formed JSON")

func readValue(d *json.Decoder, depth int) (any, error) {
	token, err := d.Token()
	if err != nil {
		return nil, &unreadable{errNotJSON.Error(), err.Error()}
	}
	switch t := token.(type) {
	case json.Delim:
		if t == '}' || t == ']' {
			return nil, &unreadable{errNotJSON.Error(), "unexpected " + t.String()}
		}
		if depth+1 > maxDepth {
			return nil, refuse("the bundle nests deeper than %d levels", maxDepth)
		}
		if t == '[' {
			items := []any{}
			for d.More() {
				item, err := readValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				items = append(items, item)
			}
			if _, err := d.Token(); err != nil {
				return nil, &unreadable{errNotJSON.Error(), err.Error()}
			}
			return items, nil
		}
		members := object{}
		for d.More() {
			name, err := d.Token()
			if err != nil {
				return nil, &unreadable{errNotJSON.Error(), err.Error()}
			}
			key, ok := name.(string)
			if !ok {
				return nil, &unreadable{errNotJSON.Error(), "a member name is not a string"}
			}
			value, err := readValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			members = append(members, member{key, value})
		}
		if _, err := d.Token(); err != nil {
			return nil, &unreadable{errNotJSON.Error(), err.Error()}
		}
		return members, nil
	default:
		return t, nil // string, json.Number, bool or nil
	}
}

func readJSON(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, refuse("the file is not UTF-8 text")
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	value, err := readValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, &unreadable{errNotJSON.Error(), "more after the bundle"}
	}
	return value, nil
}

// A schema: "string", "integer", an array of a schema, or an object's members.
type field struct {
	name   string
	schema any
}

type arrayOf struct{ item any }

var (
	entrySchema = []field{{"position", "integer"}, {"stream_version", "integer"}, {"type", "string"},
		{"record", "string"}, {"inclusion", arrayOf{"string"}}}
	photoSchema       = []field{{"photo_id", "string"}, {"sha256", "string"}, {"position", "integer"}}
	consistencySchema = []field{{"from_size", "integer"}, {"proof", arrayOf{"string"}}}
	bundleSchema      = []field{{"format", "string"}, {"inspection", "string"}, {"checkpoint", "string"},
		{"public_key", "string"}, {"key_record", entrySchema}, {"records", arrayOf{entrySchema}},
		{"photos", arrayOf{photoSchema}}, {"consistency", consistencySchema}}
)

func where(path string) string {
	if path == "" {
		return "the bundle"
	}
	return path
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func checkNames(members object, path string) error {
	seen := map[string]string{}
	for _, m := range members {
		lower := asciiLower(m.name)
		if first, ok := seen[lower]; ok {
			if first == m.name {
				return refuse("member \"%s\" appears twice in %s", shown(m.name), where(path))
			}
			return refuse("member \"%s\" differs from \"%s\" only in case in %s", shown(m.name), shown(first), where(path))
		}
		seen[lower] = m.name
	}
	return nil
}

func checkValue(value any, schema any, path string) (any, error) {
	switch s := schema.(type) {
	case string:
		if s == "string" {
			text, ok := value.(string)
			if !ok {
				return nil, refuse("%s must be a string", path)
			}
			return text, nil
		}
		number, ok := value.(json.Number)
		n, err := strconv.ParseInt(string(number), 10, 64)
		if !ok || strings.ContainsAny(string(number), ".eE") || err != nil || n < 0 {
			return nil, refuse("%s must be a whole number from 0 to %d", path, int64(math.MaxInt64))
		}
		return n, nil
	case arrayOf:
		items, ok := value.([]any)
		if !ok {
			return nil, refuse("%s must be an array", path)
		}
		out := make([]any, len(items))
		for i, item := range items {
			v, err := checkValue(item, s.item, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case []field:
		members, ok := value.(object)
		if !ok {
			return nil, refuse("%s must be an object", path)
		}
		return checkObject(members, s, path, "")
	}
	panic("unknown schema")
}

func checkObject(members object, schema []field, path string, optional string) (map[string]any, error) {
	if err := checkNames(members, path); err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, f := range schema {
		known[f.name] = true
	}
	for _, m := range members {
		if !known[m.name] {
			return nil, refuse("unknown member \"%s\" in %s", shown(m.name), where(path))
		}
	}
	for _, f := range schema {
		if _, ok := members.get(f.name); !ok && f.name != optional {
			return nil, refuse("member \"%s\" is missing from %s", f.name, where(path))
		}
	}
	out := map[string]any{}
	for _, f := range schema {
		value, ok := members.get(f.name)
		if !ok {
			continue
		}
		v, err := checkValue(value, f.schema, join(path, f.name))
		if err != nil {
			return nil, err
		}
		out[f.name] = v
	}
	return out, nil
}

type entry struct {
	position, streamVersion int64
	typ, record             string
	inclusion               []string
}

type photo struct {
	photoID, sha256 string
	position        int64
}

type bundle struct {
	inspection, checkpoint, publicKey string
	keyRecord                         entry
	records                           []entry
	photos                            []photo
	hasConsistency                    bool
	consistencyFrom                   int64
	consistencyProof                  []string
	head                              *headMember // jqc-proof-bundle/2 only (heads.go)
}

func stringList(v any) []string {
	out := []string{}
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

func toEntry(v any) entry {
	m := v.(map[string]any)
	return entry{m["position"].(int64), m["stream_version"].(int64), m["type"].(string), m["record"].(string),
		stringList(m["inclusion"])}
}

// decodeBundle decodes strictly (Schemas/ledger-format.md § Proof bundles,
// strictness); an *unreadable names the first problem.
func decodeBundle(data []byte) (b bundle, err error) {
	top, err := readJSON(data)
	if err != nil {
		return b, err
	}
	members, ok := top.(object)
	if !ok {
		return b, refuse("the bundle is not a JSON object")
	}
	if err := checkNames(members, ""); err != nil {
		return b, err
	}
	schema := bundleSchema
	if f, ok := members.get("format"); ok && f == completeFormat {
		schema = completeSchema
	} else if ok && f != nil && f != bundleFormat {
		if text, ok := f.(string); ok {
			return b, refuse("the bundle's format is \"%s\", not %s or %s", shown(text), bundleFormat, completeFormat)
		}
		return b, refuse("format must be a string")
	}
	m, err := checkObject(members, schema, "", "consistency")
	if err != nil {
		return b, err
	}
	b.inspection, b.checkpoint, b.publicKey = m["inspection"].(string), m["checkpoint"].(string), m["public_key"].(string)
	b.keyRecord = toEntry(m["key_record"])
	for _, e := range m["records"].([]any) {
		b.records = append(b.records, toEntry(e))
	}
	for _, p := range m["photos"].([]any) {
		p := p.(map[string]any)
		b.photos = append(b.photos, photo{p["photo_id"].(string), p["sha256"].(string), p["position"].(int64)})
	}
	if c, ok := m["consistency"]; ok {
		c := c.(map[string]any)
		b.hasConsistency, b.consistencyFrom, b.consistencyProof = true, c["from_size"].(int64), stringList(c["proof"])
	}
	if h, ok := m["head"]; ok {
		b.head = toHead(h)
	}
	return b, nil
}

// b64 is standard base64 with padding and nothing else: Go's decoder would
// skip line breaks, Python's does not.
func b64(text string) ([]byte, error) {
	if strings.ContainsAny(text, "\r\n") {
		return nil, errors.New("a line break in base64")
	}
	return base64.StdEncoding.DecodeString(text)
}

func b64Hash(text, path string) (tlog.Hash, error) {
	var h tlog.Hash
	raw, err := b64(text)
	if err != nil || len(raw) != tlog.HashSize {
		return h, fail("%s is not a base64 hash of 32 bytes", path)
	}
	copy(h[:], raw)
	return h, nil
}

// ---- CBOR: a strict reader of the deterministic encoding the ledger writes.

type cborMap struct {
	keys   []any
	values []any
}

func (m cborMap) text(key string) (any, bool) {
	for i, k := range m.keys {
		if k == key {
			return m.values[i], true
		}
	}
	return nil, false
}

// cborItem reads one item: definite lengths, shortest heads, no tags, only
// false/true/null among simple values, map keys uint or text in bytewise
// order of their encodings (so no duplicates).
func cborItem(data []byte, i, depth int) (any, int, error) {
	if depth > maxDepth {
		return nil, 0, errors.New("nests too deep")
	}
	if i >= len(data) {
		return nil, 0, errors.New("ends early")
	}
	major, info := data[i]>>5, data[i]&0x1f
	i++
	if major == 7 {
		switch info {
		case 20:
			return false, i, nil
		case 21:
			return true, i, nil
		case 22:
			return nil, i, nil
		case 25, 26, 27:
			n := 1 << (info - 24)
			if i+n > len(data) {
				return nil, 0, errors.New("ends early")
			}
			raw := data[i : i+n]
			switch n {
			case 2:
				return halfFloat(binary.BigEndian.Uint16(raw)), i + n, nil
			case 4:
				return float64(math.Float32frombits(binary.BigEndian.Uint32(raw))), i + n, nil
			default:
				return math.Float64frombits(binary.BigEndian.Uint64(raw)), i + n, nil
			}
		}
		return nil, 0, errors.New("a simple value other than false, true, null or a float")
	}
	var value uint64
	switch {
	case info < 24:
		value = uint64(info)
	case info <= 27:
		n := 1 << (info - 24)
		if i+n > len(data) {
			return nil, 0, errors.New("ends early")
		}
		for _, x := range data[i : i+n] {
			value = value<<8 | uint64(x)
		}
		i += n
		least := uint64(1) << (4 * n)
		if n == 1 {
			least = 24
		}
		if value < least {
			return nil, 0, errors.New("a length or integer not in its shortest form")
		}
	default:
		return nil, 0, errors.New("an indefinite length or reserved head")
	}
	switch major {
	case 0:
		return value, i, nil
	case 1:
		if value > math.MaxInt64 {
			return nil, 0, errors.New("a negative integer out of range")
		}
		return -1 - int64(value), i, nil
	case 2, 3:
		if value > uint64(len(data)-i) {
			return nil, 0, errors.New("ends early")
		}
		raw := data[i : i+int(value)]
		if major == 2 {
			return append([]byte(nil), raw...), i + int(value), nil
		}
		if !utf8.Valid(raw) {
			return nil, 0, errors.New("text that is not UTF-8")
		}
		return string(raw), i + int(value), nil
	case 4:
		items := []any{}
		for k := uint64(0); k < value; k++ {
			item, next, err := cborItem(data, i, depth+1)
			if err != nil {
				return nil, 0, err
			}
			items, i = append(items, item), next
		}
		return items, i, nil
	case 5:
		m := cborMap{}
		var previous []byte
		for k := uint64(0); k < value; k++ {
			start := i
			if i >= len(data) || (data[i]>>5 != 0 && data[i]>>5 != 3) {
				return nil, 0, errors.New("a map key that is neither an unsigned integer nor text")
			}
			key, next, err := cborItem(data, i, depth+1)
			if err != nil {
				return nil, 0, err
			}
			i = next
			encoded := data[start:i]
			if previous != nil && bytes.Compare(encoded, previous) <= 0 {
				return nil, 0, errors.New("map keys out of order or repeated")
			}
			previous = encoded
			item, next, err := cborItem(data, i, depth+1)
			if err != nil {
				return nil, 0, err
			}
			i = next
			m.keys, m.values = append(m.keys, key), append(m.values, item)
		}
		return m, i, nil
	}
	return nil, 0, errors.New("a tag")
}

func halfFloat(h uint16) float64 {
	sign, exp, frac := float64(1), int(h>>10&0x1f), float64(h&0x3ff)
	if h&0x8000 != 0 {
		sign = -1
	}
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 31:
		if frac == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * math.Ldexp(frac+1024, exp-25)
}

// record is a decoded record (Schemas/ledger-format.md § A record).
type record struct {
	format, position, version uint64
	stream, device            []byte
	typ                       string
	payload                   cborMap
	link                      []byte // key 13, nil when absent
}

func decodeRecord(raw []byte) (r record, err error) {
	item, end, err := cborItem(raw, 0, 0)
	if err != nil {
		return r, err
	}
	if end != len(raw) {
		return r, errors.New("bytes after the record")
	}
	m, ok := item.(cborMap)
	if !ok {
		return r, errors.New("not a map")
	}
	if len(m.keys) != 13 && len(m.keys) != 14 {
		return r, errors.New("not keys 0 to 12 (and 13)")
	}
	for i, k := range m.keys {
		if k != uint64(i) {
			return r, errors.New("not keys 0 to 12 (and 13)")
		}
	}
	for i, v := range m.values {
		good := false
		switch i {
		case 0, 1, 4, 6:
			_, good = v.(uint64)
		case 2, 3, 9:
			b, ok := v.([]byte)
			good = ok && len(b) == 16
		case 13:
			b, ok := v.([]byte)
			good = ok && len(b) == 32
		case 5, 7, 8:
			_, good = v.(string)
		case 10:
			_, unsigned := v.(uint64)
			_, signed := v.(int64)
			good = unsigned || signed
		case 11:
			_, good = v.(cborMap)
		case 12:
			_, good = v.(bool)
		}
		if !good {
			return r, fmt.Errorf("key %d is not of its type", i)
		}
	}
	r.format, r.position, r.version = m.values[0].(uint64), m.values[1].(uint64), m.values[4].(uint64)
	r.stream, r.device, r.typ = m.values[3].([]byte), m.values[9].([]byte), m.values[5].(string)
	r.payload = m.values[11].(cborMap)
	if len(m.values) == 14 {
		r.link = m.values[13].([]byte)
	}
	if r.format != 1 && r.format != 2 {
		return r, errors.New("an unknown record format")
	}
	if r.position < 1 || r.version < 1 {
		return r, errors.New("position or stream version 0")
	}
	if (r.link != nil) != (r.format == 2 && r.version >= 2) {
		return r, errors.New("key 13 where the format and stream version do not call for it, or none where they do")
	}
	return r, nil
}

func uuidText(b []byte) string {
	h := fmt.Sprintf("%x", b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func isLowerUUID(text string) bool {
	if len(text) != 36 {
		return false
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ---- Keys and checkpoints, on golang.org/x/mod/sumdb/note.

type verifierKey struct {
	name     string
	keyID    uint32
	public   []byte
	verifier note.Verifier
}

func (k verifierKey) described() string {
	return fmt.Sprintf("%s (key id %08x)", shown(k.name), k.keyID)
}

func (k verifierKey) same(o verifierKey) bool {
	return k.name == o.name && k.keyID == o.keyID && bytes.Equal(k.public, o.public)
}

// isKeyName is sumdb/note's rule for a key name (unexported there).
func isKeyName(name string) bool {
	return name != "" && utf8.ValidString(name) && strings.IndexFunc(name, unicode.IsSpace) < 0 &&
		!strings.Contains(name, "+")
}

// parseKey names the problem as Tools/verify-ledger does, then leaves the key
// to note.NewVerifier.
func parseKey(text string) (verifierKey, error) {
	name, rest, _ := strings.Cut(text, "+")
	id, blob, _ := strings.Cut(rest, "+")
	raw, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(blob))
	_, hexErr := strconv.ParseUint(id, 16, 32)
	if err != nil || len(id) != 8 || hexErr != nil || !isKeyName(name) || len(raw) != 33 || raw[0] != 1 {
		return verifierKey{}, errors.New("is not an Ed25519 verifier key (<name>+<key id>+<base64 key>)")
	}
	sum := sha256.Sum256(append([]byte(name+"\n"), raw...))
	keyID, _ := strconv.ParseUint(id, 16, 32)
	if uint32(keyID) != binary.BigEndian.Uint32(sum[:4]) {
		return verifierKey{}, errors.New("has a key id that does not match the key")
	}
	verifier, err := note.NewVerifier(strings.NewReplacer("\r", "", "\n", "").Replace(text))
	if err != nil {
		return verifierKey{}, errors.New("is not an Ed25519 verifier key (<name>+<key id>+<base64 key>)")
	}
	return verifierKey{name, uint32(keyID), raw[1:], verifier}, nil
}

// openCheckpoint returns the size and root of a tlog-checkpoint signed by key
// whose origin line is the key's name.
func openCheckpoint(text string, key verifierKey, what string) (int64, tlog.Hash, error) {
	var root tlog.Hash
	n, err := note.Open([]byte(text), note.VerifierList(key.verifier))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		var invalid *note.InvalidSignatureError
		switch {
		case errors.As(err, &unverified):
			return 0, root, fail("%s is not signed by %s", what, key.described())
		case errors.As(err, &invalid):
			return 0, root, fail("%s carries a signature by %s that does not verify", what, key.described())
		}
		return 0, root, fail("%s is not a signed note (C2SP signed-note)", what)
	}
	lines := strings.Split(n.Text, "\n")
	if lines[0] != key.name {
		return 0, root, fail("%s's origin line \"%s\" is not the key's name %s", what, shown(lines[0]), shown(key.name))
	}
	if len(lines) < 4 {
		return 0, root, fail("%s is not an origin line, a tree size and a root hash", what)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return 0, root, fail("%s's tree size is not a decimal number", what)
	}
	raw, err := b64(lines[2])
	if err != nil || len(raw) != tlog.HashSize {
		return 0, root, fail("%s's root hash is not 32 bytes of base64", what)
	}
	copy(root[:], raw)
	return size, root, nil
}

type capture struct {
	photoID, sha256 string
	position        int64
}

func contains(list []capture, c capture) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}

// verify returns the verdict line of a decoded bundle, or the first check
// that fails (Schemas/ledger-format.md § Proof bundles, steps 1-7).
func verify(b bundle, pinned *verifierKey, trusted *string) (string, error) {
	// 1. The key and the checkpoint.
	key, err := parseKey(b.publicKey)
	if err != nil {
		return "", fail("public_key %v", err)
	}
	if pinned != nil && !key.same(*pinned) {
		return "", fail("the bundle is signed by %s, not by the pinned key %s", key.described(), pinned.described())
	}
	size, root, err := openCheckpoint(b.checkpoint, key, "the checkpoint")
	if err != nil {
		return "", err
	}

	// 2. The trusted checkpoint the auditor holds, if one was given.
	extends := ""
	if trusted != nil {
		m, trustedRoot, err := openCheckpoint(*trusted, key, "the trusted checkpoint")
		if err != nil {
			return "", err
		}
		if m > size {
			return "", fail("the trusted checkpoint has %d records, the bundle's only %d: "+
				"the log was truncated, or the bundle is older", m, size)
		}
		if m == size && trustedRoot != root {
			return "", fail("the trusted checkpoint and the bundle's both have %d records "+
				"but different roots: the log was rewritten", size)
		}
		if 0 < m && m < size {
			if !b.hasConsistency {
				return "", fail("the bundle carries no consistency proof from the trusted checkpoint's %d "+
					"records (jqc prove --checkpoint TRUSTED adds it)", m)
			}
			if b.consistencyFrom != m {
				return "", fail("the bundle's consistency proof starts at %d records, the trusted checkpoint has %d",
					b.consistencyFrom, m)
			}
			var proof tlog.TreeProof
			for i, h := range b.consistencyProof {
				hash, err := b64Hash(h, fmt.Sprintf("consistency.proof[%d]", i))
				if err != nil {
					return "", err
				}
				proof = append(proof, hash)
			}
			if tlog.CheckTree(proof, size, root, m, trustedRoot) != nil {
				return "", fail("the bundle's tree of %d records does not extend the trusted checkpoint of "+
					"%d records: a record at or before position %d was changed, removed or reordered", size, m, m)
			}
		}
		extends = ", extending the trusted checkpoint of " + plural(m, "record")
	}

	// 3. Every entry: in the tree at its position, and saying what its record says.
	included := func(e entry, path string) (record, tlog.Hash, error) {
		raw, err := b64(e.record)
		if err != nil {
			return record{}, tlog.Hash{}, fail("%s.record is not base64", path)
		}
		var proof tlog.RecordProof
		for i, h := range e.inclusion {
			hash, err := b64Hash(h, fmt.Sprintf("%s.inclusion[%d]", path, i))
			if err != nil {
				return record{}, tlog.Hash{}, err
			}
			proof = append(proof, hash)
		}
		if e.position < 1 || e.position > size {
			return record{}, tlog.Hash{}, fail("%s.position %d is outside the signed tree of %d records", path, e.position, size)
		}
		leaf := tlog.RecordHash(raw)
		if tlog.CheckRecord(proof, size, root, e.position-1, leaf) != nil {
			return record{}, tlog.Hash{}, fail("%s (record %d) is not in the signed tree at that position", path, e.position)
		}
		r, err := decodeRecord(raw)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s.record: %v\n", path, err)
			return record{}, tlog.Hash{}, fail("%s.record is not a ledger record (Schemas/ledger-format.md § A record)", path)
		}
		if r.position != uint64(e.position) {
			return record{}, tlog.Hash{}, fail("%s says position %d, its record says %d", path, e.position, r.position)
		}
		if r.version != uint64(e.streamVersion) {
			return record{}, tlog.Hash{}, fail("%s says stream version %d, its record says %d", path, e.streamVersion, r.version)
		}
		if r.typ != e.typ {
			return record{}, tlog.Hash{}, fail("%s says type \"%s\", its record says \"%s\"", path, shown(e.typ), shown(r.typ))
		}
		return r, leaf, nil
	}

	// 4. The key record publishes the key, in the device's own stream.
	keyRecord, _, err := included(b.keyRecord, "key_record")
	if err != nil {
		return "", err
	}
	if keyRecord.typ != "device.key_published" {
		return "", fail("key_record is a %s record, not device.key_published", shown(keyRecord.typ))
	}
	if !bytes.Equal(keyRecord.stream, keyRecord.device) {
		return "", fail("key_record is not in its device's own stream")
	}
	device := uuidText(keyRecord.device)
	if key.name != "jqc/"+device {
		return "", fail("the key's name %s is not jqc/%s, the device of key_record", shown(key.name), device)
	}
	if published, _ := keyRecord.payload.text("key"); published != b.publicKey {
		return "", fail("key_record publishes another key than public_key")
	}

	// 5. The records: versions 1, 2, 3 ... of the inspection, linked.
	if !isLowerUUID(b.inspection) {
		return "", fail("inspection \"%s\" is not a lower-case UUID", shown(b.inspection))
	}
	if len(b.records) == 0 {
		return "", fail("the bundle holds no records of the inspection: it proves nothing")
	}
	var previousPosition int64
	var previousLeaf tlog.Hash
	var captured []capture
	for i, e := range b.records {
		path := fmt.Sprintf("records[%d]", i)
		r, leaf, err := included(e, path)
		if err != nil {
			return "", err
		}
		if uuidText(r.stream) != b.inspection {
			return "", fail("%s (record %d) belongs to another stream", path, e.position)
		}
		if i == 0 && r.version != 1 {
			return "", fail("%s (record %d) is version %d of the inspection, not its first: "+
				"the bundle must start at version 1", path, e.position, r.version)
		}
		if r.version != uint64(i+1) {
			return "", fail("%s (record %d) is version %d of the inspection, expected %d: "+
				"a record was left out, added or moved", path, e.position, r.version, i+1)
		}
		if e.position <= previousPosition {
			return "", fail("%s (record %d) comes before the previous version", path, e.position)
		}
		if r.format == 2 && i > 0 && !bytes.Equal(r.link, previousLeaf[:]) {
			return "", fail("%s (record %d) does not link to the record before it in the bundle", path, e.position)
		}
		previousPosition, previousLeaf = e.position, leaf
		if r.typ == "photo.captured" {
			id, _ := r.payload.text("photo_id")
			sum, _ := r.payload.text("sha256")
			idText, ok1 := id.(string)
			sumText, ok2 := sum.(string)
			if !ok1 || !ok2 {
				return "", fail("%s (record %d) is a photo.captured record without a photo_id and a sha256", path, e.position)
			}
			captured = append(captured, capture{idText, sumText, e.position})
		}
	}

	// 6. photos: exactly the records' photo captures, in record order.
	var photos []capture
	for _, p := range b.photos {
		photos = append(photos, capture{p.photoID, p.sha256, p.position})
	}
	for j := 0; j < len(photos) || j < len(captured); j++ {
		if j < len(photos) && j < len(captured) && photos[j] == captured[j] {
			continue
		}
		if j < len(photos) && !contains(captured, photos[j]) {
			p := photos[j]
			return "", fail("photos[%d] (photo %s, sha256 %s, record %d) is not a photo the records capture",
				j, shown(p.photoID), shown(p.sha256), p.position)
		}
		if j < len(captured) && !contains(photos, captured[j]) {
			c := captured[j]
			return "", fail("the photo captured by record %d (photo %s, sha256 %s) is missing from photos",
				c.position, shown(c.photoID), shown(c.sha256))
		}
		return "", fail("photos[%d] is out of the records' order or appears twice", j)
	}

	pinning := "not pinned: the bundle's own key"
	if pinned != nil {
		pinning = "pinned"
	}
	k := int64(len(b.records))
	return fmt.Sprintf("verified: inspection %s, versions 1 to %d (%s, %s), in the tree of %s signed by %s (key id %08x, %s)%s",
		b.inspection, k, plural(k, "record"), plural(int64(len(photos)), "photo"), plural(size, "record"),
		shown(key.name), key.keyID, pinning, extends), nil
}

func main() {
	flags := flag.NewFlagSet("verify-bundle-go", flag.ContinueOnError)
	keyText := flags.String("key", "", "the verifier key the auditor holds: refuse any other")
	trustedPath := flags.String("checkpoint", "", "a checkpoint file the auditor holds: the bundle's tree must extend it")
	var witnessKeys repeatedFlag
	flags.Var(&witnessKeys, "witness-key", "a witness's cosigner key (repeatable): its cosignature/v1 must verify")
	quorumText := flags.String("witness-quorum", "", "how many given witnesses must cosign (default: all)")
	flags.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: verify-bundle-go [--key VKEY] [--checkpoint TRUSTED] "+
			"[--witness-key VKEY]... [--witness-quorum N] BUNDLE.json")
		flags.PrintDefaults()
	}
	if err := flags.Parse(os.Args[1:]); err != nil || flags.NArg() != 1 {
		if err == nil {
			flags.Usage()
		}
		os.Exit(2)
	}
	set := map[string]bool{}
	flags.Visit(func(f *flag.Flag) { set[f.Name] = true })
	exitUnreadable := func(verdict, detail string) {
		if detail != "" {
			fmt.Fprintln(os.Stderr, detail)
		}
		fmt.Println("UNREADABLE: " + verdict)
		os.Exit(2)
	}

	var pinned *verifierKey
	if set["key"] {
		key, err := parseKey(*keyText)
		if err != nil {
			exitUnreadable("--key "+err.Error(), "")
		}
		pinned = &key
	}
	var quorumGiven *string
	if set["witness-quorum"] {
		quorumGiven = quorumText
	}
	witnesses, quorum, err := witnessOptions(witnessKeys, quorumGiven)
	if err != nil {
		exitUnreadable(err.Error(), "")
	}
	var trusted *string
	if set["checkpoint"] {
		data, err := os.ReadFile(*trustedPath)
		if err == nil && !utf8.Valid(data) {
			err = errors.New("not UTF-8 text")
		}
		if err != nil {
			exitUnreadable("cannot read the trusted checkpoint "+shown(*trustedPath), err.Error())
		}
		text := string(data)
		trusted = &text
	}
	path := flags.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		exitUnreadable("cannot read "+shown(path), err.Error())
	}
	b, err := decodeBundle(data)
	if err != nil {
		var u *unreadable
		if errors.As(err, &u) {
			exitUnreadable(u.verdict, u.detail)
		}
		exitUnreadable(err.Error(), "")
	}
	verdict, err := verify(b, pinned, trusted)
	second := notProven
	if err == nil && b.head != nil {
		second, err = checkHead(b)
	}
	// The cosignatures last, after every other check (as the other two verifiers do).
	cosigned := ""
	if err == nil && len(witnesses) > 0 {
		cosigned, err = checkCosignatures(b.checkpoint, witnesses, quorum)
	}
	if err != nil {
		fmt.Println("NOT VERIFIED: " + err.Error())
		os.Exit(1)
	}
	fmt.Println(verdict)
	if cosigned != "" {
		fmt.Println(cosigned)
	}
	fmt.Println(second)
}
