package framework

import (
	"strings"
	"testing"
	"time"
)

// Gaps inside a Disruptive spec's run are left out; the worst of the rest
// is named with how late it came and the grace period's margin over it.
func TestLeaseSummaryLeavesDisruptionsOut(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	r := &LeaseRecorder{gaps: []LeaseGap{
		{Node: "a", From: at(0), To: at(10.2), Duration: 40},
		{Node: "b", From: at(0), To: at(12.5), Duration: 40},
		{Node: "a", From: at(100), To: at(160), Duration: 40}, // a stopped kubelet
	}}
	s := r.Summarize([][2]time.Time{{at(105), at(150)}})
	if s.Renewals != 2 || s.Excluded != 1 || s.Nodes != 2 || s.Worst == nil || s.Worst.Node != "b" {
		t.Fatalf("summary %+v", s)
	}
	text := s.Text(50*time.Second, "default")
	for _, want := range []string{"worst gap 12.5 s on b", "2.5 s late", "4.0x the worst gap"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q lacks %q", text, want)
		}
	}
}
