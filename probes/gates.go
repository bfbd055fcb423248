// Package probes observes a cluster and returns what it saw: plain values,
// no assertions, so the Ginkgo suites and the ndfq CLI share them and they
// run against any cluster a kubeconfig reaches. What only the suites use
// (binding past the scheduler, exercising a restart rule, reading one
// apiserver at a time) lives in e2e/framework instead.
package probes

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
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
	families, err := parseFamilies(r)
	if err != nil {
		return nil, err
	}
	return gatesOf(families)
}

func parseFamilies(r io.Reader) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	return families, nil
}

func gatesOf(families map[string]*dto.MetricFamily) (Gates, error) {
	fam, ok := families["kubernetes_feature_enabled"]
	if !ok {
		return nil, fmt.Errorf("no kubernetes_feature_enabled metric (component older than 1.26, or metrics not exposed)")
	}
	gates := Gates{}
	for _, m := range fam.GetMetric() {
		gates[labelValue(m, "name")] = GateState{Enabled: gaugeValue(m) == 1, Stage: labelValue(m, "stage")}
	}
	return gates, nil
}

// gaugeValue is a gauge's value, also where the exposition gives no TYPE.
func gaugeValue(m *dto.Metric) float64 {
	if m.GetUntyped() != nil {
		return m.GetUntyped().GetValue()
	}
	return m.GetGauge().GetValue()
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// schedulerFamilies are kube-scheduler's own metric families: an endpoint
// with none of them is some other component's. A prefix, not one family:
// a scheduler that has placed nothing yet exposes no attempts.
const schedulerFamilyPrefix = "scheduler_"

// leaderFamily is client-go's leader-election gauge: 1 on the instance
// that holds the Lease named by its name label.
const leaderFamily = "leader_election_master_status"

// LeadingSchedulerGates reads the gates at a kube-scheduler /metrics URL
// given by the operator, and takes them only from the kube-scheduler that
// leads (the one that decides placements): an apiserver's or a standby
// scheduler's gates are not the scheduler's answer. A scheduler that runs
// no leader election is taken where no kube-scheduler Lease exists (then
// no other one leads). Where they are not taken, unchecked says why.
func LeadingSchedulerGates(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, url string) (g Gates, unchecked string) {
	families, err := schedulerFamilies(ctx, cfg, url)
	if err != nil {
		return nil, err.Error()
	}
	if !slices.ContainsFunc(slices.Collect(maps.Keys(families)), func(name string) bool { return strings.HasPrefix(name, schedulerFamilyPrefix) }) {
		return nil, fmt.Sprintf("--scheduler-metrics-url %s has no %s* family: it is not a kube-scheduler's /metrics", url, schedulerFamilyPrefix)
	}
	leads := false
	for _, m := range families[leaderFamily].GetMetric() {
		if labelValue(m, "name") == "kube-scheduler" {
			leads = gaugeValue(m) == 1
			if !leads {
				return nil, fmt.Sprintf("--scheduler-metrics-url %s is a kube-scheduler that does not hold the kube-scheduler Lease (%s 0): a standby's gates say nothing of the scheduler that places pods", url, leaderFamily)
			}
		}
	}
	if !leads {
		leases, err := cs.CoordinationV1().Leases(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kube-scheduler"})
		switch {
		case err != nil:
			return nil, fmt.Sprintf("--scheduler-metrics-url %s is a kube-scheduler without %s, and the kube-scheduler Lease could not be read (%v): whether it is the one that places pods is unknown", url, leaderFamily, err)
		case len(leases.Items) > 0:
			return nil, fmt.Sprintf("--scheduler-metrics-url %s is a kube-scheduler without %s{name=\"kube-scheduler\"} while kube-system/kube-scheduler is held by %s: whether it is the one that places pods is unknown",
				url, leaderFamily, ptr.Deref(leases.Items[0].Spec.HolderIdentity, "nobody"))
		}
	}
	g, err = gatesOf(families)
	if err != nil {
		return nil, fmt.Sprintf("kube-scheduler %s: %v", url, err)
	}
	return g, ""
}

// GateSource names a gate fingerprint's source.
type GateSource struct {
	Kind string // kube-apiserver, kube-scheduler, kubelet
	Node string // for kubelets
}

func (c GateSource) String() string {
	if c.Node != "" {
		return c.Kind + " on " + c.Node
	}
	return c.Kind
}

// APIServerGates reads the apiserver's own /metrics.
func APIServerGates(ctx context.Context, cs kubernetes.Interface) (Gates, error) {
	families, err := apiserverFamilies(ctx, cs)
	if err != nil {
		return nil, err
	}
	return gatesOf(families)
}

// apiserverFamilies reads the metric families of the apiserver cs reaches.
func apiserverFamilies(ctx context.Context, cs kubernetes.Interface) (map[string]*dto.MetricFamily, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver /metrics: %w", err)
	}
	return parseFamilies(strings.NewReader(string(raw)))
}

// KubeletGates reads a kubelet's /metrics through the apiserver's node proxy.
func KubeletGates(ctx context.Context, cs kubernetes.Interface, node string) (Gates, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("kubelet on %s /metrics (node proxy): %w", node, err)
	}
	return GatesFromMetrics(strings.NewReader(string(raw)))
}

// schedulerFamilies reads the metric families at url. The scheduler
// serves a self-signed certificate, so only its identity is not
// verified; the client still authenticates.
func schedulerFamilies(ctx context.Context, cfg *rest.Config, url string) (map[string]*dto.MetricFamily, error) {
	return SecurePortFamilies(ctx, cfg, "kube-scheduler", url)
}

// SecurePortFamilies reads the metric families a component serves at url
// on its secure port with the configuration's credentials (a token, a
// token file or a client certificate). The scheduler and the kubelet serve
// self-signed certificates by default, so only the server's identity is not
// verified; the client still authenticates and is authorized.
func SecurePortFamilies(ctx context.Context, cfg *rest.Config, what, url string) (map[string]*dto.MetricFamily, error) {
	c := rest.CopyConfig(cfg)
	c.Insecure, c.CAData, c.CAFile = true, nil, "" //nolint:gosec // self-signed serving certificates
	c.Timeout = 15 * time.Second
	client, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%s %s: HTTP %d: %s", what, url, resp.StatusCode, body)
	}
	families, err := parseFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, url, err)
	}
	return families, nil
}

// GatesOf reads kubernetes_feature_enabled from parsed families.
func GatesOf(families map[string]*dto.MetricFamily) (Gates, error) { return gatesOf(families) }

// Names lists the gates, sorted.
func (g Gates) Names() []string {
	out := make([]string, 0, len(g))
	for n := range g {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// schedulerReach bounds one try of a kube-scheduler pod's address: one
// bound to loopback (kubeadm's default) never answers from here.
const schedulerReach = 3 * time.Second

// DiscoveredSchedulerGates reads the default kube-scheduler's gates without
// a URL given: at each kube-scheduler static pod's own address
// (component=kube-scheduler in kube-system, its --secure-port), taken from
// the one that leads. unchecked says why none was taken (a managed control
// plane shows no such pod; kubeadm's binds to loopback).
func DiscoveredSchedulerGates(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config) (g Gates, url, unchecked string) {
	pods, err := cs.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "component=kube-scheduler"})
	if err != nil {
		return nil, "", fmt.Sprintf("no --scheduler-metrics-url, and kube-scheduler pods in %s could not be listed (%v)", metav1.NamespaceSystem, err)
	}
	var why []string
	for _, p := range pods.Items {
		if p.Status.PodIP == "" || p.Status.Phase != corev1.PodRunning {
			continue
		}
		url := "https://" + net.JoinHostPort(p.Status.PodIP, securePort(p, "10259")) + "/metrics"
		tctx, cancel := context.WithTimeout(ctx, schedulerReach)
		g, reason := LeadingSchedulerGates(tctx, cs, cfg, url)
		cancel()
		if reason == "" {
			return g, url, ""
		}
		why = append(why, reason)
	}
	if len(why) == 0 {
		return nil, "", "no --scheduler-metrics-url, and no running kube-scheduler pod is visible in " + metav1.NamespaceSystem + " (a managed control plane)"
	}
	return nil, "", "no --scheduler-metrics-url, and no kube-scheduler pod's own address gave the leader's gates: " + strings.Join(why, "; ")
}

// securePort is a control-plane static pod's --secure-port, or def.
func securePort(p corev1.Pod, def string) string {
	for _, c := range p.Spec.Containers {
		for _, arg := range slices.Concat(c.Command, c.Args) {
			if v, ok := strings.CutPrefix(arg, "--secure-port="); ok {
				return v
			}
		}
	}
	return def
}
