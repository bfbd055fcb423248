package verdict

import (
	"strings"
	"testing"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
)

// A component that answered the probe in its own words must have counted
// it in its upstream series; one it could not read is unchecked.
func TestSignalsMustMove(t *testing.T) {
	sched := fixtures.SignalSchedulerRefusals.Name
	valid := fixtures.SignalValidatorRejections.Name
	for name, tc := range map[string]struct {
		signals   []probes.SignalReading
		outcome   Outcome
		condition Condition
		item      string
	}{
		"both rose": {[]probes.SignalReading{{Signal: sched, Component: "kube-scheduler", Instance: "https://cp:10259/metrics", Before: 0, After: 1}, {Signal: valid, Component: "kube-apiserver", Before: 7, After: 8}}, GO, "", ""},
		// Other pods that waited before and went meanwhile do not hide it,
		// nor make it: the gauge must hold the probe's refused pods.
		"scheduler holds them, others left": {[]probes.SignalReading{{Signal: sched, Component: "kube-scheduler", Instance: "https://cp:10259/metrics", Gauge: true, Before: 5, After: 1}, {Signal: valid, Component: "kube-apiserver", Before: 7, After: 8}}, GO, "", ""},
		"scheduler silent":                  {[]probes.SignalReading{{Signal: sched, Component: "kube-scheduler", Instance: "https://cp:10259/metrics", Gauge: true, Before: 2, After: 0}, {Signal: valid, Component: "kube-apiserver", Before: 7, After: 8}}, HOLD, SignalSilent, ""},
		"validator silent":                  {[]probes.SignalReading{{Signal: valid, Component: "kube-apiserver", Before: 7, After: 7}}, HOLD, SignalSilent, ""},
		"validator unread":                  {[]probes.SignalReading{{Signal: valid, Component: "kube-apiserver", Unread: "403 forbidden"}}, INCOMPLETE, "", ItemSignals},
	} {
		run := soundRun()
		run.Signals = tc.signals
		g := Evaluate(run, Policy{Thresholds: DefaultThresholds})
		if g.Outcome != tc.outcome {
			t.Errorf("%s: %s, want %s: %v %v", name, g.Outcome, tc.outcome, g.Reasons, g.Unchecked)
		}
		if tc.condition != "" && (len(g.Reasons) != 1 || g.Reasons[0].Condition != tc.condition || !strings.Contains(g.Reasons[0].Detail, "in its own words")) {
			t.Errorf("%s: reasons %v, want one %s naming the answers", name, g.Reasons, tc.condition)
		}
		if tc.item != "" && (len(g.Unchecked) != 1 || g.Unchecked[0].Check != tc.item) {
			t.Errorf("%s: unchecked %v, want %s", name, g.Unchecked, tc.item)
		}
	}
	// Where each apiserver was asked, each counts its own rejections.
	run := soundRun()
	run.Updates[1].ByAPIServer = map[string]probes.Answer{
		"10.0.0.2:6443": {Code: 403, Message: run.Updates[1].Message},
		"10.0.0.3:6443": {Code: 403, Message: run.Updates[1].Message},
	}
	run.Signals = []probes.SignalReading{{Signal: valid, Component: "kube-apiserver", Instance: "10.0.0.2:6443", Before: 0, After: 2}, {Signal: valid, Component: "kube-apiserver", Instance: "10.0.0.3:6443", Before: 4, After: 4}}
	if g := Evaluate(run, Policy{Thresholds: DefaultThresholds}); g.Outcome != HOLD || len(g.Reasons) != 1 || !strings.Contains(g.Reasons[0].Detail, "10.0.0.3:6443") {
		t.Errorf("one apiserver silent: %s %v", g.Outcome, g.Reasons)
	}
}
