package topology

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ndfq/ndfq/fixtures"
)

// A release that is not its minor's source is held to the oracle's check
// of it (kept in the cache, so no download here): a difference refuses
// the topology naming it, agreement runs and the report says so, no
// check at all leaves the run unchecked by name.
func TestCheckOracle(t *testing.T) {
	topo, err := LoadWith("uniform-1.37", "1.37.1")
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	say := func(string, ...any) {}

	notes, unchecked := topo.OracleNotes(cache)
	if len(unchecked) != 1 || !strings.Contains(unchecked[0], "v1.37.1: ndfq's 1.37 tables were not checked") || !strings.Contains(strings.Join(notes, " "), "v1.37.2 (the source of ndfq's 1.37 tables)") {
		t.Errorf("nothing checked: notes %q, unchecked %q", notes, unchecked)
	}

	differ := fixtures.ReleaseCheck{Release: "v1.37.1", Oracle: fixtures.OracleDigest(), Checked: time.Now(),
		Differences: []string{"messages: v1.37.1's plugin/pkg/admission/nodedeclaredfeatures/admission.go lacks \"...\""}}
	if err := fixtures.SaveReleaseCheck(cache, differ); err != nil {
		t.Fatal(err)
	}
	err = topo.CheckOracle(context.Background(), cache, say)
	if err == nil || !strings.Contains(err.Error(), "v1.37.1 (1.37's tables were written from v1.37.2)") || !strings.Contains(err.Error(), differ.Differences[0]) {
		t.Errorf("a release that differs: %v", err)
	}
	if _, unchecked := topo.OracleNotes(cache); len(unchecked) != 1 || !strings.Contains(unchecked[0], "disagree") {
		t.Errorf("a release that differs is not held: %q", unchecked)
	}

	differ.Differences = nil
	if err := fixtures.SaveReleaseCheck(cache, differ); err != nil {
		t.Fatal(err)
	}
	if err := topo.CheckOracle(context.Background(), cache, say); err != nil {
		t.Errorf("a release that agrees: %v", err)
	}
	if notes, unchecked := topo.OracleNotes(cache); len(unchecked) != 0 || !strings.Contains(strings.Join(notes, " "), "v1.37.1 (checked against its own sources on ") {
		t.Errorf("a release that agrees: notes %q, unchecked %q", notes, unchecked)
	}
}
