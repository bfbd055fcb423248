package exporter

import (
	"flag"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/fixtures"
)

const (
	rulesFile          = "../../config/prometheus/ndfq.rules.yaml"
	prometheusRuleFile = "../../config/prometheus/prometheusrule.yaml"
)

var update = flag.Bool("update", false, "rewrite config/prometheus/prometheusrule.yaml from ndfq.rules.yaml")

type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Record string `json:"record,omitempty"`
			Alert  string `json:"alert,omitempty"`
			Expr   string `json:"expr"`
		} `json:"rules"`
	} `json:"groups"`
}

// The PrometheusRule carries exactly the plain file's groups.
func TestPrometheusRuleMatchesRulesFile(t *testing.T) {
	plain, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var groups map[string]any
	if err := yaml.Unmarshal(plain, &groups); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata": map[string]any{
			"name": "ndfq", "namespace": "ndfq-system",
			"labels": map[string]any{"app.kubernetes.io/name": "ndfq-exporter"},
		},
		"spec": groups,
	}
	if *update {
		out, err := yaml.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		header := "# Generated from ndfq.rules.yaml (go test ./probes/exporter -run TestPrometheusRule -update):\n# the same groups for the Prometheus Operator.\n"
		if err := os.WriteFile(prometheusRuleFile, append([]byte(header), out...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(prometheusRuleFile)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s differs from %s's groups: go test ./probes/exporter -run TestPrometheusRule -update", prometheusRuleFile, rulesFile)
	}
}

// Every series the rules read is the exporter's, an upstream signal
// fixtures check against each release, or a rule's own record.
func TestRulesReadKnownSeries(t *testing.T) {
	raw, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	known := slices.Clone(MetricNames)
	for _, s := range fixtures.Signals {
		known = append(known, s.Name, s.Name+"_bucket")
	}
	var records []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				records = append(records, r.Record)
			}
		}
	}
	// A series name: an identifier followed by { or [ or a space, not a
	// function call or a keyword.
	name := regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	keywords := []string{"sum", "by", "max", "max_over_time", "count_over_time", "rate", "increase", "histogram_quantile", "or", "and", "unless", "on", "group_left", "offset", "le", "pool", "minor", "profile", "instance", "d", "m"}
	// up is Prometheus's own series of every target.
	known = append(known, "up")
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			expr := regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`).ReplaceAllString(r.Expr, " ")
			for _, n := range name.FindAllString(expr, -1) {
				if slices.Contains(keywords, n) || slices.Contains(records, n) {
					continue
				}
				if !slices.Contains(known, n) {
					t.Errorf("rule %s%s reads %s: neither the exporter's (MetricNames) nor a fixtures.Signals series", r.Record, r.Alert, n)
				}
			}
		}
	}
	// Each upstream signal's selector appears as fixtures write it.
	for _, s := range fixtures.Signals {
		sel := s.Name
		if s.Name == fixtures.SignalSchedulerFilterLatency.Name {
			sel += "_bucket" // a histogram: the rules read its buckets
		}
		if !strings.Contains(string(raw), sel+"{"+s.Selector) {
			t.Errorf("no rule reads %s{%s}", sel, s.Selector)
		}
	}
}
