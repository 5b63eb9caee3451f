// verify-bundle-go checks a proof bundle from `jqc prove` with code nobody on
// this project wrote: Go's checksum-database packages golang.org/x/mod/sumdb/tlog
// (the RFC 9162 tree and its inclusion proofs) and golang.org/x/mod/sumdb/note
// (C2SP signed notes with Ed25519). Only the bundle's JSON, keys 0 to 4 of each
// CBOR record and its key 13 (the per-stream back-link, the record's last 35
// bytes) are read here; Schemas/ledger-format.md § Proof bundles is the spec.
//
// usage: verify-bundle-go BUNDLE.json
// exit status: 0 the bundle verifies, 1 it does not, 2 unreadable input
package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type entry struct {
	Position  int64    `json:"position"`
	Record    string   `json:"record"`
	Inclusion []string `json:"inclusion"`
}

type bundle struct {
	Format     string  `json:"format"`
	Inspection string  `json:"inspection"`
	Checkpoint string  `json:"checkpoint"`
	PublicKey  string  `json:"public_key"`
	KeyRecord  entry   `json:"key_record"`
	Records    []entry `json:"records"`
}

// header is what the verifier needs of a record: keys 1 to 4.
type header struct {
	format   uint64
	position uint64
	id       []byte
	stream   []byte
	version  uint64
	link     []byte // key 13, the per-stream back-link, if present
}

type reader struct {
	b []byte
	i int
}

func (r *reader) head() (major byte, value uint64, err error) {
	if r.i >= len(r.b) {
		return 0, 0, errors.New("record ends early")
	}
	c := r.b[r.i]
	r.i++
	major, info := c>>5, c&0x1f
	var n int
	switch {
	case info < 24:
		return major, uint64(info), nil
	case info == 24:
		n = 1
	case info == 25:
		n = 2
	case info == 26:
		n = 4
	case info == 27:
		n = 8
	default:
		return 0, 0, errors.New("indefinite or reserved CBOR length")
	}
	if r.i+n > len(r.b) {
		return 0, 0, errors.New("record ends early")
	}
	for _, x := range r.b[r.i : r.i+n] {
		value = value<<8 | uint64(x)
	}
	r.i += n
	return major, value, nil
}

func (r *reader) uint(want uint64) (uint64, error) {
	major, key, err := r.head()
	if err != nil || major != 0 || key != want {
		return 0, fmt.Errorf("record key %d missing", want)
	}
	major, v, err := r.head()
	if err != nil || major != 0 {
		return 0, fmt.Errorf("record key %d is not an unsigned integer", want)
	}
	return v, nil
}

func (r *reader) bytes16(want uint64) ([]byte, error) {
	major, key, err := r.head()
	if err != nil || major != 0 || key != want {
		return nil, fmt.Errorf("record key %d missing", want)
	}
	major, n, err := r.head()
	if err != nil || major != 2 || n != 16 || r.i+16 > len(r.b) {
		return nil, fmt.Errorf("record key %d is not 16 bytes", want)
	}
	out := r.b[r.i : r.i+16]
	r.i += 16
	return out, nil
}

func parseHeader(record []byte) (h header, err error) {
	r := &reader{b: record}
	major, count, err := r.head()
	if err != nil || major != 5 {
		return h, errors.New("a record is not a CBOR map")
	}
	if h.format, err = r.uint(0); err != nil {
		return
	}
	// With 14 keys the record ends with key 13 and 32 bytes: 0x0d 0x58 0x20 ‖ hash.
	if count == 14 {
		n := len(record)
		if n < 40 || record[n-35] != 0x0d || record[n-34] != 0x58 || record[n-33] != 0x20 {
			return h, errors.New("the record does not end with key 13 and 32 bytes")
		}
		h.link = record[n-32:]
	}
	if h.position, err = r.uint(1); err != nil {
		return
	}
	if h.id, err = r.bytes16(2); err != nil {
		return
	}
	if h.stream, err = r.bytes16(3); err != nil {
		return
	}
	h.version, err = r.uint(4)
	return
}

func uuidBytes(text string) ([]byte, error) {
	hex := strings.ReplaceAll(text, "-", "")
	if len(hex) != 32 {
		return nil, errors.New("not a UUID")
	}
	out := make([]byte, 16)
	for i := range out {
		v, err := strconv.ParseUint(hex[2*i:2*i+2], 16, 8)
		if err != nil {
			return nil, errors.New("not a UUID")
		}
		out[i] = byte(v)
	}
	return out, nil
}

func check(b bundle) (string, error) {
	if b.Format != "jqc-proof-bundle/1" {
		return "", fmt.Errorf("unknown bundle format %q", b.Format)
	}
	verifier, err := note.NewVerifier(b.PublicKey)
	if err != nil {
		return "", fmt.Errorf("public key: %v", err)
	}
	n, err := note.Open([]byte(b.Checkpoint), note.VerifierList(verifier))
	if err != nil {
		return "", fmt.Errorf("checkpoint: %v", err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 || lines[0] != verifier.Name() {
		return "", errors.New("the checkpoint's origin is not the key's name")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || strconv.FormatInt(size, 10) != lines[1] {
		return "", errors.New("the checkpoint's size is not a decimal number")
	}
	rootBytes, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(rootBytes) != tlog.HashSize {
		return "", errors.New("the checkpoint's root is not 32 bytes of base64")
	}
	var root tlog.Hash
	copy(root[:], rootBytes)

	included := func(e entry) (header, error) {
		record, err := base64.StdEncoding.DecodeString(e.Record)
		if err != nil {
			return header{}, fmt.Errorf("record %d is not base64", e.Position)
		}
		var proof tlog.RecordProof
		for _, p := range e.Inclusion {
			raw, err := base64.StdEncoding.DecodeString(p)
			if err != nil || len(raw) != tlog.HashSize {
				return header{}, fmt.Errorf("record %d: a proof hash is not 32 bytes", e.Position)
			}
			var h tlog.Hash
			copy(h[:], raw)
			proof = append(proof, h)
		}
		if err := tlog.CheckRecord(proof, size, root, e.Position-1, tlog.RecordHash(record)); err != nil {
			return header{}, fmt.Errorf("record %d is not in the signed tree at that position: %v", e.Position, err)
		}
		h, err := parseHeader(record)
		if err != nil {
			return header{}, fmt.Errorf("record %d: %v", e.Position, err)
		}
		if h.position != uint64(e.Position) {
			return header{}, fmt.Errorf("the record at %d says it is record %d", e.Position, h.position)
		}
		return h, nil
	}

	if _, err := included(b.KeyRecord); err != nil {
		return "", fmt.Errorf("key record: %v", err)
	}
	stream, err := uuidBytes(b.Inspection)
	if err != nil {
		return "", fmt.Errorf("inspection: %v", err)
	}
	var previous int64
	var previousLeaf []byte
	for i, e := range b.Records {
		h, err := included(e)
		if err != nil {
			return "", err
		}
		if h.format >= 2 {
			if i == 0 && h.link != nil {
				return "", errors.New("the first record links to an earlier record the bundle does not hold")
			}
			if i > 0 && string(h.link) != string(previousLeaf) {
				return "", fmt.Errorf("record %d does not link to the record before it in the bundle", e.Position)
			}
		}
		raw, _ := base64.StdEncoding.DecodeString(e.Record)
		leaf := tlog.RecordHash(raw)
		previousLeaf = leaf[:]
		if string(h.stream) != string(stream) {
			return "", fmt.Errorf("record %d belongs to another stream", e.Position)
		}
		if h.version != uint64(i+1) {
			return "", fmt.Errorf("record %d is version %d of the inspection, expected %d: a record was left out, added or moved", e.Position, h.version, i+1)
		}
		if e.Position <= previous {
			return "", fmt.Errorf("record %d comes before the previous version", e.Position)
		}
		previous = e.Position
	}
	return fmt.Sprintf("%d records of %s proven in the tree of %d signed by %s", len(b.Records), b.Inspection, size, verifier.Name()), nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: verify-bundle-go BUNDLE.json")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var b bundle
	if err := json.Unmarshal(data, &b); err != nil {
		fmt.Fprintln(os.Stderr, "not a bundle:", err)
		os.Exit(2)
	}
	summary, err := check(b)
	if err != nil {
		fmt.Println("NOT VERIFIED:", err)
		os.Exit(1)
	}
	fmt.Println("verified:", summary)
}
