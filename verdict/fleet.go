package verdict

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
)

// IntentSchema is the JSON schema of a fleet intent file.
//
//go:embed intent.schema.json
var IntentSchema []byte

// FleetIntentKind is a fleet intent file's kind (a kind topology has none).
const FleetIntentKind = "FleetIntent"

// FleetIntent is a fleet as its operators plan it (intent.schema.json):
// pools by label selector, node counts as ranges, kubelet versions,
// gates and runtime per pool, and the control plane where it is planned.
type FleetIntent struct {
	APIVersion   string             `json:"apiVersion"`
	Kind         string             `json:"kind"`
	ControlPlane *FleetControlPlane `json:"controlPlane,omitempty"`
	Pools        []FleetPool        `json:"pools"`
}

// FleetControlPlane is the planned control plane.
type FleetControlPlane struct {
	Version         string           `json:"version"`
	APIServer       FleetComponent   `json:"apiServer,omitempty"`
	Scheduler       FleetComponent   `json:"scheduler,omitempty"`
	ExtraSchedulers []FleetScheduler `json:"extraSchedulers,omitempty"`
}

// FleetComponent is a control-plane component's planned gates.
type FleetComponent struct {
	FeatureGates    map[string]bool `json:"featureGates,omitempty"`
	EmulatedVersion string          `json:"emulatedVersion,omitempty"`
}

// FleetScheduler is a scheduler besides the default one.
type FleetScheduler struct {
	Name                string `json:"name"`
	IgnoresDeclarations bool   `json:"ignoresDeclarations,omitempty"`
}

// FleetPool is one planned pool.
type FleetPool struct {
	Name     string       `json:"name"`
	Selector string       `json:"selector,omitempty"`
	Nodes    FleetCount   `json:"nodes"`
	Kubelet  FleetKubelet `json:"kubelet"`
}

// FleetCount is an exact count or a range.
type FleetCount struct {
	Count *int `json:"count,omitempty"`
	Min   *int `json:"min,omitempty"`
	Max   *int `json:"max,omitempty"`
}

// FleetKubelet is a pool's planned kubelets.
type FleetKubelet struct {
	Versions         []string        `json:"versions"`
	FeatureGates     map[string]bool `json:"featureGates,omitempty"`
	Runtime          string          `json:"runtime,omitempty"`
	CPUManagerPolicy string          `json:"cpuManagerPolicy,omitempty"`
}

// IsFleetIntent tells a fleet intent file from a kind topology.
func IsFleetIntent(data []byte) bool {
	var head struct {
		Kind string `json:"kind"`
	}
	return yaml.Unmarshal(data, &head) == nil && head.Kind == FleetIntentKind
}

// ParseFleetIntent reads a fleet intent file: the schema first (errors
// name the field), then what the schema cannot say (known minors, gates
// and runtimes, selectors, counts, unique names).
func ParseFleetIntent(src string, data []byte) (*Intent, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: malformed YAML: %w", src, err)
	}
	if err := validateJSON("intent.schema.json", IntentSchema, js); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	var f FleetIntent
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	in, err := f.Intent()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return in, nil
}

// Intent is the plan the verdict holds the fleet to, or every field the
// oracle refuses (an unknown minor, gate or runtime; a bad selector).
func (f FleetIntent) Intent() (*Intent, error) {
	in, errs := f.intent()
	return in, errors.Join(errs...)
}

// intent is the plan the verdict holds the fleet to.
func (f FleetIntent) intent() (*Intent, []error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	out := &Intent{Pools: map[string]IntentPool{}}
	for i, p := range f.Pools {
		field := fmt.Sprintf("pools[%d] (%s)", i, p.Name)
		if _, dup := out.Pools[p.Name]; dup {
			bad(field+".name", "%q is given twice", p.Name)
		}
		pool := IntentPool{RuntimeUnplanned: p.Kubelet.Runtime == ""}
		if p.Selector != "" {
			sel, err := labels.Parse(p.Selector)
			if err != nil {
				bad(field+".selector", "%v", err)
			}
			pool.Selector = sel
		}
		switch c := p.Nodes; {
		case c.Count != nil && (c.Min != nil || c.Max != nil):
			bad(field+".nodes", "count, or min (and max): not both")
		case c.Count != nil:
			pool.Min, pool.Max = *c.Count, *c.Count
		case c.Min != nil:
			pool.Min = *c.Min
			if c.Max != nil {
				if *c.Max < *c.Min {
					bad(field+".nodes.max", "%d is below min %d", *c.Max, *c.Min)
				}
				pool.Max = *c.Max
			}
		}
		var rt fixtures.Runtime
		if p.Kubelet.Runtime != "" {
			r, err := fixtures.RuntimeByName(p.Kubelet.Runtime)
			if err != nil {
				bad(field+".kubelet.runtime", "%v", err)
			}
			rt = r.Reports
		}
		rt.CPUManagerPolicy = p.Kubelet.CPUManagerPolicy
		for j, v := range p.Kubelet.Versions {
			vfield := fmt.Sprintf("%s.kubelet.versions[%d]", field, j)
			minor := kubeversion.MinorOf(v)
			if err := fixtures.KnownMinor(minor); err != nil {
				bad(vfield, "%v", err)
				continue
			}
			if problems := fixtures.CheckGates(minor, p.Kubelet.FeatureGates); len(problems) > 0 {
				bad(field+".kubelet.featureGates", "for %s: %s", v, strings.Join(problems, "; "))
			}
			pool.Kubelets = append(pool.Kubelets, fixtures.Kubelet{Version: strings.TrimPrefix(v, "v"), Gates: p.Kubelet.FeatureGates, Runtime: rt})
		}
		out.Pools[p.Name] = pool
	}
	if cp := f.ControlPlane; cp != nil {
		v, err := kubeversion.Parse(cp.Version)
		if err != nil {
			bad("controlPlane.version", "%v", err)
		} else if err := fixtures.KnownMinor(v.Minor()); err != nil {
			bad("controlPlane.version", "%v", err)
		}
		icp := &IntentControlPlane{Version: cp.Version,
			APIServer: fixtures.Component{Version: cp.Version, Gates: cp.APIServer.FeatureGates, EmulatedVersion: cp.APIServer.EmulatedVersion},
			Scheduler: fixtures.Component{Version: cp.Version, Gates: cp.Scheduler.FeatureGates, EmulatedVersion: cp.Scheduler.EmulatedVersion}}
		for name, c := range map[string]fixtures.Component{"apiServer": icp.APIServer, "scheduler": icp.Scheduler} {
			if err == nil {
				if problems := fixtures.CheckGates(c.GateMinor(), c.Gates); len(problems) > 0 {
					bad("controlPlane."+name+".featureGates", "%s", strings.Join(problems, "; "))
				}
			}
		}
		for i, s := range cp.ExtraSchedulers {
			if slices.ContainsFunc(icp.ExtraSchedulers, func(o IntentScheduler) bool { return o.Name == s.Name }) {
				bad(fmt.Sprintf("controlPlane.extraSchedulers[%d].name", i), "%q is given twice", s.Name)
			}
			icp.ExtraSchedulers = append(icp.ExtraSchedulers, IntentScheduler(s))
		}
		out.ControlPlane = icp
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return out, errs
}
