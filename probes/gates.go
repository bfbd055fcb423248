// Package probes observes a cluster and returns what it saw: plain values,
// no assertions, so the Ginkgo suites and the ndfq CLI share them and they
// run against any cluster a kubeconfig reaches.
package probes

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// GateState is one gate as a component reports it in kubernetes_feature_enabled.
type GateState struct {
	Enabled bool
	Stage   string // ALPHA, BETA, "" for GA, DEPRECATED
}

// Gates maps gate name to state; a gate the component does not know is absent.
type Gates map[string]GateState

// Enabled reports whether the gate is known and on.
func (g Gates) Enabled(name string) bool { return g[name].Enabled }

// Known reports whether the component has the gate at all.
func (g Gates) Known(name string) bool { _, ok := g[name]; return ok }

// Describe renders one gate for messages: "on (BETA)", "off (ALPHA)", "unknown".
func (g Gates) Describe(name string) string {
	s, ok := g[name]
	if !ok {
		return "unknown to this component"
	}
	state := "off"
	if s.Enabled {
		state = "on"
	}
	if s.Stage == "" {
		return state + " (GA)"
	}
	return fmt.Sprintf("%s (%s)", state, s.Stage)
}

// GatesFromMetrics reads kubernetes_feature_enabled from a Prometheus text exposition.
func GatesFromMetrics(r io.Reader) (Gates, error) {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	fam, ok := families["kubernetes_feature_enabled"]
	if !ok {
		return nil, fmt.Errorf("no kubernetes_feature_enabled metric (component older than 1.26, or metrics not exposed)")
	}
	gates := Gates{}
	for _, m := range fam.GetMetric() {
		var name, stage string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "name":
				name = l.GetValue()
			case "stage":
				stage = l.GetValue()
			}
		}
		gates[name] = GateState{Enabled: m.GetGauge().GetValue() == 1, Stage: stage}
	}
	return gates, nil
}

// Component names a gate fingerprint's source.
type Component struct {
	Kind string // kube-apiserver, kube-scheduler, kubelet
	Node string // for kubelets
}

func (c Component) String() string {
	if c.Node != "" {
		return c.Kind + " on " + c.Node
	}
	return c.Kind
}

// APIServerGates reads the apiserver's own /metrics.
func APIServerGates(ctx context.Context, cs kubernetes.Interface) (Gates, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver /metrics: %w", err)
	}
	return GatesFromMetrics(strings.NewReader(string(raw)))
}

// KubeletGates reads a kubelet's /metrics through the apiserver's node proxy.
func KubeletGates(ctx context.Context, cs kubernetes.Interface, node string) (Gates, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("kubelet on %s /metrics (node proxy): %w", node, err)
	}
	return GatesFromMetrics(strings.NewReader(string(raw)))
}

// SchedulerGates reads kube-scheduler's /metrics at url (its secure port,
// e.g. https://127.0.0.1:PORT/metrics) with the kubeconfig's credentials.
// The scheduler serves a self-signed certificate, so only its identity is
// not verified; the client still authenticates.
func SchedulerGates(ctx context.Context, cfg *rest.Config, url string) (Gates, error) {
	tcfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	if tcfg == nil {
		tcfg = &tls.Config{}
	}
	tcfg.InsecureSkipVerify = true //nolint:gosec // self-signed serving cert of kube-scheduler
	tcfg.RootCAs = nil
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: tcfg}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if cfg.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("kube-scheduler %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("kube-scheduler %s: HTTP %d: %s", url, resp.StatusCode, body)
	}
	return GatesFromMetrics(resp.Body)
}

// Names lists the gates, sorted.
func (g Gates) Names() []string {
	out := make([]string, 0, len(g))
	for n := range g {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
