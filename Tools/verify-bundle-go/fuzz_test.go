package main

// A bounded fuzz of the bundle decoder and verifier (Go 1.19's native
// fuzzing): Tools/verify-bundle-go/fuzz runs it for a few seconds in
// Tools/test. The seeds are the kept bundles of Tests/Fuzz/corpus/bundle/,
// which Tools/tests/test_bundle_fuzz.py fuzzes the Python decoder with too.
// Any input may be refused (unreadable or not verified); none may panic.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func seedDirectory(t testing.TB) string {
	directory, err := filepath.Abs(filepath.Join("..", "..", "Tests", "Fuzz", "corpus", "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	return directory
}

func FuzzBundle(f *testing.F) {
	directory := seedDirectory(f)
	trustedBytes, err := os.ReadFile(filepath.Join(directory, "trusted.checkpoint"))
	if err != nil {
		f.Fatalf("the seed corpus has no trusted.checkpoint: %v", err)
	}
	trusted := string(trustedBytes)
	names, err := filepath.Glob(filepath.Join(directory, "*.json"))
	if err != nil || len(names) == 0 {
		f.Fatalf("no seed bundles in %s", directory)
	}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Go's fuzzing has no per-input timeout: a hang would only stall the
		// run. Far longer than any bundle takes (milliseconds), it is a crash.
		watchdog := time.AfterFunc(10*time.Second, func() { panic("one input took over 10 s: a hang") })
		defer watchdog.Stop()
		b, err := decodeBundle(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a refusal without a reason")
			}
			return
		}
		// Verified or not, with and without the trusted checkpoint: never a panic.
		for _, with := range []*string{nil, &trusted} {
			verdict, err := verify(b, nil, with)
			if err == nil && !strings.HasPrefix(verdict, "verified: ") {
				t.Fatalf("verified with the verdict %q", verdict)
			}
		}
	})
}

// The seeds themselves decode and verify: a fuzz run starts from bundles
// that reach the verifier, not only from ones refused at the first byte.
func TestSeedBundlesVerify(t *testing.T) {
	directory := seedDirectory(t)
	trusted, err := os.ReadFile(filepath.Join(directory, "trusted.checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(trusted)
	for _, name := range []string{"seed-bundle.json", "seed-consistent.json"} {
		data, err := os.ReadFile(filepath.Join(directory, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := decodeBundle(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := verify(b, nil, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "seed-consistent.json" {
			if _, err := verify(b, nil, &text); err != nil {
				t.Fatalf("%s with the trusted checkpoint: %v", name, err)
			}
		}
	}
}
