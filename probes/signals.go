package probes

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ndfq/ndfq/fixtures"
)

// SignalReading is one upstream signal (fixtures.Signals) read on one
// component right before the probe's pods and again while they still
// wait: whether an operator's dashboard saw the probe's own refusals and
// rejections. Unread says why it could not be read.
type SignalReading struct {
	Signal    string `json:"signal"`
	Component string `json:"component"`
	// Instance is the apiserver's endpoint or the scheduler's metrics URL;
	// "" is the apiserver behind the cluster's address.
	Instance string  `json:"instance,omitempty"`
	Before   float64 `json:"before"`
	After    float64 `json:"after"`
	// Gauge: the series counts what waits now (the scheduler's
	// unschedulable pods), not what happened: After is the highest of a
	// few reads while the probe's pods wait, and it must hold them all
	// whatever else came and went since Before.
	Gauge  bool   `json:"gauge,omitempty"`
	Unread string `json:"unread,omitempty"`
}

// signalTarget is where one component's signal is read.
type signalTarget struct {
	signal    fixtures.Signal
	component string
	instance  string
	read      func(context.Context) (map[string]*dto.MetricFamily, error)
}

// signalTargets are the leading scheduler (where its metrics URL is
// known) and every apiserver the run reaches.
func signalTargets(cs kubernetes.Interface, cfg *rest.Config, apiservers map[string]kubernetes.Interface, schedulerURL string) []signalTarget {
	apiserver := func(c kubernetes.Interface) func(context.Context) (map[string]*dto.MetricFamily, error) {
		return func(ctx context.Context) (map[string]*dto.MetricFamily, error) { return apiserverFamilies(ctx, c) }
	}
	var out []signalTarget
	if schedulerURL != "" {
		out = append(out, signalTarget{fixtures.SignalSchedulerRefusals, "kube-scheduler", schedulerURL, func(ctx context.Context) (map[string]*dto.MetricFamily, error) {
			return schedulerFamilies(ctx, cfg, schedulerURL)
		}})
	}
	if len(apiservers) == 0 {
		return append(out, signalTarget{fixtures.SignalValidatorRejections, "kube-apiserver", "", apiserver(cs)})
	}
	for _, ep := range slices.Sorted(maps.Keys(apiservers)) {
		out = append(out, signalTarget{fixtures.SignalValidatorRejections, "kube-apiserver", ep, apiserver(apiservers[ep])})
	}
	return out
}

// signalValue sums the signal's samples that carry its selector's labels
// (a histogram's _count is its sample count).
func signalValue(families map[string]*dto.MetricFamily, s fixtures.Signal) float64 {
	name := strings.TrimSuffix(s.Name, "_count")
	want := selectorLabels(s.Selector)
	if s.Name == fixtures.SignalSchedulerRefusals.Name {
		want["profile"] = "default-scheduler"
	}
	sum := 0.0
	for _, m := range families[name].GetMetric() {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(want)), func(k string) bool { return labelValue(m, k) != want[k] }) {
			if h := m.GetHistogram(); h != nil {
				sum += float64(h.GetSampleCount())
			} else {
				sum += gaugeValue(m) + m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// selectorLabels parses `a="x",b="y"` into a map.
func selectorLabels(sel string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(sel, ",") {
		k, v, ok := strings.Cut(part, "=")
		if ok {
			out[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return out
}

// readSignals reads every target once; a target that does not answer
// is Unread with why.
func readSignals(ctx context.Context, targets []signalTarget) []SignalReading {
	out := make([]SignalReading, len(targets))
	for i, t := range targets {
		out[i] = SignalReading{Signal: t.signal.Name, Component: t.component, Instance: t.instance, Gauge: t.signal.Gauge}
		families, err := t.read(ctx)
		if err != nil {
			out[i].Unread = err.Error()
			continue
		}
		out[i].Before = signalValue(families, t.signal)
	}
	return out
}

// gaugeReads is how many reads, a second apart, a gauge's After is the
// highest of: the scheduler moves an unschedulable pod out of its count
// for a moment when a cluster event requeues it.
const gaugeReads = 3

// rereadSignals reads the targets again into After.
func rereadSignals(ctx context.Context, targets []signalTarget, readings []SignalReading) {
	for i, t := range targets {
		if readings[i].Unread != "" {
			continue
		}
		reads := 1
		if readings[i].Gauge {
			reads = gaugeReads
		}
		for n := range reads {
			if n > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
			}
			families, err := t.read(ctx)
			if err != nil {
				readings[i].Unread = "after the probe's pods: " + err.Error()
				break
			}
			readings[i].After = max(readings[i].After, signalValue(families, t.signal))
		}
	}
}
