package verdict

import (
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// WritePrometheus writes the verdict's figures in the Prometheus text
// format, for node_exporter's textfile collector or a Pushgateway: one
// series per outcome (1 for this run's), per condition and unchecked
// item, and per pool's counts and decision times. Labels are pools,
// conditions and checks: never a node.
func (v Verdict) WritePrometheus(w io.Writer) error {
	reg := prometheus.NewPedanticRegistry()
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		reg.MustRegister(g)
		return g
	}
	outcome := gauge("ndfq_probe_verdict", "1 for the run's verdict (GO, HOLD or INCOMPLETE), 0 for the others.", "verdict")
	for _, o := range []Outcome{GO, HOLD, INCOMPLETE} {
		outcome.WithLabelValues(string(o)).Set(map[bool]float64{true: 1}[v.Outcome == o])
	}
	reasons := gauge("ndfq_probe_reasons", "Stop conditions that fired, by condition (every condition listed, 0 where none).", "condition")
	for _, c := range Conditions {
		reasons.WithLabelValues(string(c))
	}
	for _, r := range v.Reasons {
		reasons.WithLabelValues(string(r.Condition)).Inc()
	}
	unchecked := gauge("ndfq_probe_unchecked", "Checks that apply and were not made, by check.", "check")
	for _, u := range v.Unchecked {
		unchecked.WithLabelValues(u.Check).Inc()
	}
	refusals := gauge("ndfq_probe_pool_refusals", "The pool's probe pods refused in the NodeDeclaredFeatures plugin's words.", "pool")
	rejections := gauge("ndfq_probe_pool_rejections", "The pool's updates rejected in NodeDeclaredFeatureValidator's words.", "pool")
	missing := gauge("ndfq_probe_pool_missing_ratio", "Share of the pool's nodes that declare less than their kubelet must.", "pool")
	decision := gauge("ndfq_probe_pool_decision_seconds", "The pool's probe pods' scheduling decision time, by quantile.", "pool", "quantile")
	for _, ps := range v.Pools {
		refusals.WithLabelValues(ps.Pool).Set(float64(ps.Refusals))
		rejections.WithLabelValues(ps.Pool).Set(float64(ps.Rejections))
		missing.WithLabelValues(ps.Pool).Set(ps.MissingPct / 100)
		if ps.ProbeP50 != nil {
			decision.WithLabelValues(ps.Pool, "0.5").Set(*ps.ProbeP50)
		}
		if ps.ProbeP99 != nil {
			decision.WithLabelValues(ps.Pool, "0.99").Set(*ps.ProbeP99)
		}
	}
	gauge("ndfq_probe_took_seconds", "How long the probe run took.").WithLabelValues().Set(v.TookSeconds)
	if t, err := time.Parse(time.RFC3339, v.Time); err == nil {
		gauge("ndfq_probe_start_timestamp_seconds", "When the probe run started (Unix time).").WithLabelValues().Set(float64(t.Unix()))
	}
	families, err := reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	return nil
}
