package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMarkdownGOAndHOLD(t *testing.T) {
	s := Summary{Topology: "t", ControlPlane: "v1.37.2", Pools: []string{"a", "b"}, Counts: Counts{Passed: 3},
		Observations: []Observation{
			{Kind: KindDeclaration, Pool: "a", Kubelet: "v1.37.2", Digest: "abc", Set: []string{"X", "Y"}, OK: true},
			{Kind: KindPlacement, Pool: "b", Expected: "refused", Seen: "refused", OK: true},
			{Kind: KindUpdate, Pool: "b", Expected: "403", Seen: "200", OK: false},
			{Kind: KindFinding, Text: "F1: thing"}, {Kind: KindFinding, Text: "F1: thing"},
			{Kind: KindFinding, Pool: "b", Node: "b1", Text: "stale"}, {Kind: KindMeasure, Pool: "a", Text: "took 6s"},
		}}
	var b strings.Builder
	if err := s.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"# ndfq report: t — GO", "| a | v1.37.2 | `abc` | X Y | 0/0 | 0/0 | 0/0 | 0/0 |", "| b |  | `` |  | 1/1 | 1/0 | 1/1 | 0/1 |", "- F1: thing\n", "- [b/b1] stale\n", "- [a] took 6s"} {
		if !strings.Contains(out, want) && !strings.Contains(out+"\n", want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "F1: thing") != 1 {
		t.Error("a finding seen by several specs is listed once")
	}
	s.Failures = []Failure{{Spec: "spec x", Message: "it broke\nbadly"}}
	b.Reset()
	_ = s.Markdown(&b)
	if s.Verdict() != "HOLD" || !strings.Contains(b.String(), "- **spec x**: it broke badly") {
		t.Errorf("HOLD must name the failed spec:\n%s", b.String())
	}
	if (Summary{}).Verdict() != "HOLD" {
		t.Error("a run where nothing passed is never GO")
	}
}

const ginkgoJUnit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" disabled="1" errors="0" failures="1" time="1">
  <testsuite name="ndfq e2e" package="/e2e" tests="4" disabled="1" skipped="0" errors="0" failures="1" time="1">
    <testcase name="[SynchronizedBeforeSuite]" classname="ndfq e2e" status="passed" time="1"></testcase>
    <testcase name="[It] a passes" classname="ndfq e2e" status="passed" time="0"></testcase>
    <testcase name="[It] b fails" classname="ndfq e2e" status="failed" time="0"><failure message="x" type="failed">x</failure></testcase>
    <testcase name="[It] c skipped" classname="ndfq e2e" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
  </testsuite>
</testsuites>`

func TestCountJUnit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "junit.xml")
	_ = os.WriteFile(p, []byte(ginkgoJUnit), 0o644)
	c, err := CountJUnit(p)
	if err != nil {
		t.Fatal(err)
	}
	if c != (Counts{Passed: 1, Failed: 1, Skipped: 1}) {
		t.Errorf("got %+v", c)
	}
	if c.String() != "1 passed, 1 failed, 1 skipped" {
		t.Errorf("closing line %q", c.String())
	}
}
