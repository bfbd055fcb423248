package claims

import (
	"fmt"
	"slices"

	"github.com/ndfq/ndfq/fixtures"
)

// registryFeatures are the names in either minor's registry, cp's first.
func registryFeatures(cp, kubelet string) []string {
	var names []string
	for _, minor := range []string{cp, kubelet} {
		for _, f := range fixtures.FeaturesOf(minor) {
			if !slices.Contains(names, f.Name) {
				names = append(names, f.Name)
			}
		}
	}
	return names
}

// unaskablePod says, in the cell, why no pod can need a scheduling-inferred
// feature here (no probe yet, or the apiserver drops the field); false when
// one can.
func unaskablePod(c *Cell, f featureRow, api fixtures.Component) bool {
	switch {
	case f.apiGate != "" && !api.Enables(f.apiGate):
		c.NotApplicable = fmt.Sprintf("kube-apiserver has %s off in this topology: it drops or refuses the field, so no pod can need %s", f.apiGate, f.name)
	case !f.probed:
		c.Uncovered = "fixtures have no probe pod for it yet (" + f.inference + ")"
	default:
		return false
	}
	return true
}

type featureRow struct {
	name, apiGate, inference string
	updateForbidden          string // why no pod update can need it
	upstreamBug              string // the update probe's UpstreamBug
	probed                   bool
	exercised                bool // a scheduling probe that shows the feature's effect on a kubelet
	// undeclared is what a kubelet that runs the exercise without declaring the feature does.
	undeclared func(fixtures.Runtime) string
}

// schedulingFeatures are the registry features cp infers at scheduling,
// with their probe where fixtures have one.
func schedulingFeatures(cp string) []featureRow { return inferred(cp, false) }

// updateFeatures are the registry features cp infers at update.
func updateFeatures(cp string) []featureRow { return inferred(cp, true) }

func inferred(cp string, update bool) []featureRow {
	var out []featureRow
	for _, f := range fixtures.FeaturesOf(cp) {
		inference := f.Scheduling
		if update {
			inference = f.Update
		}
		if inference == "" {
			continue
		}
		row := featureRow{name: f.Name, inference: inference}
		if update {
			row.updateForbidden = f.UpdateForbidden
		}
		probeOf(&row, cp, update)
		out = append(out, row)
	}
	return out
}

// probeOf fills in the row's probe, where fixtures have one: its apiserver
// gate and, for a scheduling probe, whether it has an exercise.
func probeOf(row *featureRow, cp string, update bool) {
	if !update {
		p, ok := fixtures.FeaturePodFor(cp, row.name)
		row.apiGate, row.probed, row.exercised = p.APIServerGate, ok, ok && p.Exercise != nil
		row.undeclared = p.UndeclaredOutcome
		if f, known := fixtures.FeatureByName(row.name); !ok && known {
			row.apiGate = f.FieldGate
		}
		return
	}
	if p, ok := fixtures.FeatureUpdateFor(cp, row.name); ok {
		row.apiGate, row.probed, row.upstreamBug = p.APIServerGate, true, p.UpstreamBug
	}
}
