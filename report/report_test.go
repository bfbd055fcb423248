package report

import (
	"github.com/ndfq/ndfq/verdict"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ndfq/ndfq/claims"
)

func TestMarkdownGOAndHOLD(t *testing.T) {
	s := Summary{Topology: "t", ControlPlane: "v1.37.2", Pools: []string{"a", "b"}, Counts: Counts{Passed: 3},
		Observations: []Observation{
			{Kind: KindDeclaredSet, Pool: "a", Kubelet: "v1.37.2", Runtime: "containerd://2.4.2", Digest: "abc", Set: []string{"X", "Y"}, OK: true},
			{Kind: KindPlacement, Pool: "b", Expected: "refused", Seen: "refused", OK: true},
			{Kind: KindUpdate, Pool: "b", Expected: "403", Seen: "403", OK: true},
			{Kind: KindUpdate, Pool: "b", Expected: "200", Seen: "200", OK: true},
			{Kind: KindFinding, Text: "F1: thing"}, {Kind: KindFinding, Text: "F1: thing"},
			{Kind: KindFinding, Pool: "b", Node: "b1", Text: "stale"}, {Kind: KindMeasure, Pool: "a", Text: "took 6s"},
		}}
	var b strings.Builder
	if err := s.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"# ndfq report: t — GO", "| a | v1.37.2 | containerd://2.4.2 | `abc` | X Y | 0/0 | 0/0 | 0/0 | 0/0 |", "| b |  |  | `` |  | 1/1 | 1/1 | 1/1 | 2/2 |", "- F1: thing\n", "- [b/b1] stale\n", "- [a] took 6s"} {
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
}

// GO only when specs ran, none failed, none was left out and every claim's
// observation held (issue 12).
func TestVerdictFailsClosed(t *testing.T) {
	sound := func() Summary {
		return Summary{Counts: Counts{Passed: 2}, Observations: []Observation{
			{Kind: KindPlacement, Pool: "a", Expected: "refused", Seen: "refused", OK: true},
			{Kind: KindFinding, Text: "F1"}, // a finding holds nothing: its OK is not read
		}}
	}
	cases := map[string]struct {
		change func(*Summary)
		want   verdict.Outcome
		says   string
	}{
		"sound":               {func(*Summary) {}, GO, "— GO"},
		"nothing ran":         {func(s *Summary) { s.Counts = Counts{} }, INCOMPLETE, "- no spec passed"},
		"dry run":             {func(s *Summary) { s.Incomplete = []string{"dry run: no spec touched a cluster"} }, INCOMPLETE, "- dry run"},
		"filtered":            {func(s *Summary) { s.Incomplete = []string{"label filter cli left 70 of 82 specs out"} }, INCOMPLETE, "left 70 of 82"},
		"failed spec":         {func(s *Summary) { s.Failures = []Failure{{Spec: "x", Message: "y"}} }, HOLD, "- **x**: y"},
		"observation not OK":  {func(s *Summary) { s.Observations[0].Seen, s.Observations[0].OK = "bound", false }, HOLD, "placement observation on [a] no feature did not hold: expected refused, seen bound"},
		"failure beats holes": {func(s *Summary) { s.Failures = []Failure{{Spec: "x"}}; s.Incomplete = []string{"dry run"} }, HOLD, "Not every claim was asked"},
	}
	for name, c := range cases {
		s := sound()
		c.change(&s)
		var b strings.Builder
		_ = s.Markdown(&b)
		if s.Verdict() != c.want || !strings.Contains(b.String(), c.says) {
			t.Errorf("%s: verdict %s, want %s saying %q:\n%s", name, s.Verdict(), c.want, c.says, b.String())
		}
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

// A cell of the matrix that applies and has no observation is INCOMPLETE;
// cells that do not apply are listed with their reason and change nothing.
func TestVerdictNeedsEveryCellThatApplies(t *testing.T) {
	cells := []claims.Cell{
		{Kind: claims.Placement, Pool: "a", Feature: "F", Expect: claims.Refused},
		{Kind: claims.Placement, Pool: "b", Feature: "F", NotApplicable: "kube-apiserver has F off in this topology"},
		{Kind: claims.Update, Pool: "a", Feature: "G", Uncovered: "no probe", Accepted: "a later minor's"},
	}
	s := Summary{Topology: "t", Pools: []string{"a", "b"}, Counts: Counts{Passed: 1, Skipped: 1}, Cells: cells,
		Skipped: []Failure{{Spec: "rolling back: not applicable", Message: "not applicable: locked on"}}}
	var b strings.Builder
	_ = s.Markdown(&b)
	if s.Verdict() != INCOMPLETE || !strings.Contains(b.String(), "no observation of the placement claim on pool a for F (expected refused)") {
		t.Errorf("unobserved cell: verdict %s\n%s", s.Verdict(), b.String())
	}
	s.Observations = []Observation{{Kind: KindPlacement, Pool: "a", Feature: "F", Expected: "refused", Seen: "refused", OK: true}}
	b.Reset()
	_ = s.Markdown(&b)
	out := b.String()
	for _, want := range []string{"— GO", "| placement · F | ✓ refused | n/a [1] |", "[1] not applicable: kube-apiserver has F off in this topology", "| update · G | not covered, accepted [2] |  |", "[2] not covered, accepted by the topology (a later minor's): no probe", "1 cells apply, 1 are not applicable here, 1 are not covered", "## Specs that do not apply here or have no probe yet (1, counted as skipped)\n\n- rolling back — not applicable: locked on"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	s.Observations[0].Seen, s.Observations[0].OK = "bound", false
	b.Reset()
	_ = s.Markdown(&b)
	if s.Verdict() != HOLD || !strings.Contains(b.String(), "| placement · F | ✗ bound (want refused) |") {
		t.Errorf("broken cell:\n%s", b.String())
	}
}

// report.md names its run and when it started in its first lines, so one
// left by an earlier run is never read as this one's (issue 27).
func TestReportNamesItsRun(t *testing.T) {
	s := Summary{RunID: "ndfq-seed42", Started: time.Date(2026, 12, 5, 21, 0, 0, 0, time.UTC), Topology: "skew-1.37", Counts: Counts{Passed: 1}}
	var b strings.Builder
	_ = s.Markdown(&b)
	lines := strings.SplitN(b.String(), "\n", 4)
	if len(lines) < 3 || lines[2] != "Run ndfq-seed42, started 2026-12-05T21:00:00Z." {
		t.Errorf("first lines:\n%s", b.String())
	}
}

// A failed observation of every kind of the claims table is a "did not
// hold" line and HOLD, not only the four kinds report.md once knew.
func TestEveryKindThatFailsHolds(t *testing.T) {
	for _, row := range claims.Table {
		s := Summary{Topology: "t", Pools: []string{"a"}, Counts: Counts{Passed: 1},
			Observations: []Observation{{Kind: string(row.Kind), Pool: "a", Feature: "F", Expected: "want", Seen: "other", OK: false}}}
		var b strings.Builder
		_ = s.Markdown(&b)
		if s.Verdict() != HOLD || !strings.Contains(b.String(), "- "+string(row.Kind)+" observation on [a] F did not hold: expected want, seen other") {
			t.Errorf("kind %s: verdict %s\n%s", row.Kind, s.Verdict(), b.String())
		}
	}
}

// A not-covered cell makes the run INCOMPLETE unless the topology accepts
// it with a reason; accepted, it is listed with that reason.
func TestNotCoveredIsIncompleteUnlessAccepted(t *testing.T) {
	cell := claims.Cell{Kind: claims.Update, Pool: "a", Feature: "G", Uncovered: "no probe"}
	s := Summary{Topology: "t", Pools: []string{"a"}, Counts: Counts{Passed: 1}, Cells: []claims.Cell{cell}}
	var b strings.Builder
	_ = s.Markdown(&b)
	if s.Verdict() != INCOMPLETE || !strings.Contains(b.String(), "the update claim on pool a for G is not covered (no probe), and the topology does not accept that") {
		t.Errorf("verdict %s\n%s", s.Verdict(), b.String())
	}
	s.Cells[0].Accepted = "waits on a 1.38 kubelet"
	b.Reset()
	_ = s.Markdown(&b)
	if s.Verdict() != GO || !strings.Contains(b.String(), "not covered, accepted by the topology (waits on a 1.38 kubelet): no probe") {
		t.Errorf("accepted: verdict %s\n%s", s.Verdict(), b.String())
	}
}

// A failed spec names the cells it was about, and a cell seen only
// through that failure is named with its kind.
func TestFailedSpecNamesItsCells(t *testing.T) {
	cell := claims.Cell{Kind: claims.Trust, Pool: "a", Feature: claims.AnotherNode, Expect: claims.Rejected}
	s := Summary{Topology: "t", Pools: []string{"a"}, Counts: Counts{Passed: 1, Failed: 1}, Cells: []claims.Cell{cell},
		Failures: []Failure{{Spec: "trust spec", Message: "timed out", Cells: []string{cell.Key()}}}}
	var b strings.Builder
	_ = s.Markdown(&b)
	if s.Verdict() != HOLD || !strings.Contains(b.String(), "- **trust spec** (cell trust/a/another node's declaredFeatures): timed out") {
		t.Errorf("verdict %s\n%s", s.Verdict(), b.String())
	}
}

// ReadVerdict reads back what Markdown wrote: the verdict and its reasons.
func TestReadVerdict(t *testing.T) {
	s := Summary{Topology: "t", Pools: []string{"a"}, Counts: Counts{Passed: 1},
		Cells: []claims.Cell{{Kind: claims.Update, Pool: "a", Feature: "G", Uncovered: "no probe"}}}
	p := filepath.Join(t.TempDir(), "report.md")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Markdown(f)
	_ = f.Close()
	got, reasons, err := ReadVerdict(p)
	if err != nil || got != INCOMPLETE || len(reasons) != 1 || !strings.HasPrefix(reasons[0], "the update claim on pool a for G is not covered") {
		t.Errorf("%s %q %v", got, reasons, err)
	}
	_ = os.WriteFile(p, []byte("not a report\n"), 0o644)
	if _, _, err := ReadVerdict(p); err == nil {
		t.Error("a file that is not report.md")
	}
}

// report.md's header says whether any wait or window was overridden.
func TestReportListsOverrides(t *testing.T) {
	s := Summary{Topology: "t", Counts: Counts{Passed: 1}}
	var b strings.Builder
	_ = s.Markdown(&b)
	if !strings.Contains(b.String(), "Waits and windows: intervals.yaml's, none overridden.") {
		t.Errorf("%s", b.String())
	}
	s.Overrides = []string{"NDFQ_INTERVAL_WAIT_QUEUEING_BIND=45s,2s"}
	b.Reset()
	_ = s.Markdown(&b)
	if !strings.Contains(b.String(), "overridden (internal/wait/intervals.yaml's otherwise): NDFQ_INTERVAL_WAIT_QUEUEING_BIND=45s,2s.") {
		t.Errorf("%s", b.String())
	}
}
