package verdict

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// AboveBaseline fires where a figure of this run is above an earlier
// report's (--baseline): a pool's missing-report rate, its refusals or
// rejections in the components' words, or its probe pods' decision time.
const AboveBaseline Condition = "above-baseline"

// Baseline is an earlier probe report this run is compared with.
type Baseline struct {
	Path    string
	Verdict Verdict
	// LatencyRatio and LatencyFloor: a decision time is above the
	// baseline's when over both its ratio and its difference (noise on a
	// quiet cluster is a second).
	LatencyRatio float64
	LatencyFloor float64 // seconds
}

// ReadBaseline reads an earlier report written with -o json or --json.
func ReadBaseline(path string) (*Baseline, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	if err := ValidateProbeJSON(raw); err != nil {
		return nil, fmt.Errorf("--baseline %s: not a probe report (ndfq probe -o json): %w", path, err)
	}
	var v Verdict
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("--baseline %s: %w", path, err)
	}
	return &Baseline{Path: path, Verdict: v, LatencyRatio: 2, LatencyFloor: 1}, nil
}

// describe names the baseline in reasons and the report.
func (b *Baseline) describe() string {
	return fmt.Sprintf("%s (run %s at %s, %s)", b.Path, b.Verdict.RunID, b.Verdict.Time, b.Verdict.Outcome)
}

// checkBaseline compares each pool's figures with the baseline's; pools
// on one side only are named as not compared.
func checkBaseline(e *evaluation) {
	b := e.policy.Baseline
	if b == nil {
		return
	}
	e.v.Baseline = b.describe()
	before := map[string]PoolSummary{}
	for _, ps := range b.Verdict.Pools {
		before[ps.Pool] = ps
	}
	for _, pool := range e.pools() {
		now, then := e.summary[pool], before[pool]
		if _, ok := before[pool]; !ok {
			e.v.NotApplicable = append(e.v.NotApplicable, Unchecked{Check: ItemBaseline, Pool: pool, Reason: "the pool is not in the baseline " + b.describe() + ": nothing to compare"})
			continue
		}
		above := func(figure string, nowV, thenV float64, unit string) {
			e.hold(AboveBaseline, pool, "", "%s: %g%s now, %g%s in the baseline %s", figure, nowV, unit, thenV, unit, b.describe())
		}
		if now.MissingPct > then.MissingPct {
			above("missing-report rate", now.MissingPct, then.MissingPct, "%")
		}
		if now.Refusals > then.Refusals {
			above("refusals in the plugin's words", float64(now.Refusals), float64(then.Refusals), "")
		}
		if now.Rejections > then.Rejections {
			above("rejections in the validator's words", float64(now.Rejections), float64(then.Rejections), "")
		}
		for _, q := range []struct {
			figure    string
			now, then *float64
		}{{"probe pods' decision p50", now.ProbeP50, then.ProbeP50}, {"probe pods' decision p99", now.ProbeP99, then.ProbeP99}} {
			if q.now != nil && q.then != nil && *q.now > *q.then*b.LatencyRatio && *q.now-*q.then >= b.LatencyFloor {
				above(fmt.Sprintf("%s (over %gx and %gs more)", q.figure, b.LatencyRatio, b.LatencyFloor), *q.now, *q.then, "s")
			}
		}
	}
	var gone []string
	for pool := range before {
		if !slices.Contains(e.pools(), pool) {
			gone = append(gone, pool)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		e.v.NotApplicable = append(e.v.NotApplicable, Unchecked{Check: ItemBaseline, Reason: fmt.Sprintf("pools of the baseline %s not in this run: %s", b.describe(), strings.Join(gone, ", "))})
	}
}
