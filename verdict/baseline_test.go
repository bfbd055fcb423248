package verdict

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ndfq/ndfq/probes"
)

func baselineOf(t *testing.T, run *probes.Run) *Baseline {
	t.Helper()
	var buf bytes.Buffer
	if err := Evaluate(run, Policy{Thresholds: DefaultThresholds}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "baseline.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := ReadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBaseline(t *testing.T) {
	b := baselineOf(t, soundRun())
	if g := Evaluate(soundRun(), Policy{Thresholds: DefaultThresholds, Baseline: b}); g.Outcome != GO || !strings.Contains(g.Baseline, "baseline.json") {
		t.Errorf("the same run against itself: %s %v (baseline %q)", g.Outcome, g.Reasons, g.Baseline)
	}
	// Pool a now refuses a pod it bound before (it lost X), and decides 3x slower.
	run := soundRun()
	run.Placements[1].Declares, run.Placements[1].Bound, run.Placements[1].Message = false, false, pluginRefusal
	run.Declarations[0].Declared, run.Declarations[0].Expected = nil, nil
	for i := range run.Placements {
		if run.Placements[i].Pool == "b" && run.Placements[i].Feature != "" {
			run.Placements[i].Decision = 6 * time.Second
		}
	}
	g := Evaluate(run, Policy{Thresholds: DefaultThresholds, Baseline: b})
	var refusals, latency bool
	for _, r := range g.Reasons {
		if r.Condition != AboveBaseline {
			continue
		}
		refusals = refusals || (r.Pool == "a" && strings.Contains(r.Detail, "refusals in the plugin's words: 1 now, 0 in the baseline"))
		latency = latency || (r.Pool == "b" && strings.Contains(r.Detail, "decision p50") && strings.Contains(r.Detail, "6s now, 2s in the baseline"))
	}
	if g.Outcome != HOLD || !refusals || !latency {
		t.Errorf("a pool that lost a feature, a slower pool: %s %v", g.Outcome, g.Reasons)
	}
	// A pool the baseline lacks is named, not compared.
	run = soundRun()
	for i := range run.Declarations {
		if run.Declarations[i].Pool == "b" {
			run.Declarations[i].Pool = "c"
		}
	}
	for i := range run.Placements {
		if run.Placements[i].Pool == "b" {
			run.Placements[i].Pool = "c"
		}
	}
	g = Evaluate(run, Policy{Thresholds: DefaultThresholds, Baseline: b})
	var named int
	for _, n := range g.NotApplicable {
		if n.Check == ItemBaseline {
			named++
		}
	}
	if named != 2 {
		t.Errorf("pool c new, pool b gone: %d baseline items in %v", named, g.NotApplicable)
	}
}

func TestWritePrometheus(t *testing.T) {
	g := Evaluate(soundRun(), Policy{Thresholds: DefaultThresholds})
	var buf bytes.Buffer
	if err := g.WritePrometheus(&buf); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatalf("not the text format: %v\n%s", err, buf.String())
	}
	for _, line := range []string{`ndfq_probe_verdict{verdict="GO"} 1`, `ndfq_probe_verdict{verdict="HOLD"} 0`, `ndfq_probe_pool_refusals{pool="b"} 1`, `ndfq_probe_reasons{condition="signal-silent"} 0`} {
		if !strings.Contains(buf.String(), line+"\n") {
			t.Errorf("no %s in\n%s", line, buf.String())
		}
	}
	if _, ok := families["ndfq_probe_took_seconds"]; !ok {
		t.Errorf("no ndfq_probe_took_seconds")
	}
}
