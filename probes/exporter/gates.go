package exporter

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
)

var (
	descGateFingerprint = prometheus.NewDesc(MetricGateFingerprint,
		"Digest of the gates of the feature's family a component reports in kubernetes_feature_enabled (value 1); kubelets are read on one node per pool and minor.",
		[]string{"component", "pool", "minor", "fingerprint"}, nil)
	descGateReadErrors = prometheus.NewDesc(MetricGateReadErrors,
		"Components whose gates the last round could not read (value: how many), by component.",
		[]string{"component"}, nil)
)

// GateReader reads gate fingerprints in the background, one round every
// Every: the apiserver that answers, and one Ready kubelet per pool and
// minor, so a round costs pools x minors requests whatever the fleet's size.
type GateReader struct {
	Clientset kubernetes.Interface
	Config    *rest.Config
	Nodes     corelisters.NodeLister
	PoolLabel string
	Every     time.Duration

	mu     sync.Mutex
	prints []fingerprint
	errors map[string]int
}

// Components as the fingerprint series names them.
const (
	componentAPIServer = "kube-apiserver"
	componentKubelet   = "kubelet"
)

type fingerprint struct{ component, pool, minor, digest string }

// Run reads until ctx ends.
func (r *GateReader) Run(ctx context.Context) {
	for {
		r.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.Every):
		}
	}
}

func (r *GateReader) round(ctx context.Context) {
	var prints []fingerprint
	errors := map[string]int{componentAPIServer: 0, componentKubelet: 0}
	if g, err := probes.APIServerGates(ctx, r.Clientset); err != nil {
		errors[componentAPIServer]++
	} else {
		prints = append(prints, fingerprint{componentAPIServer, "", "", Fingerprint(g)})
	}
	for _, k := range r.sampleKubelets() {
		n := k.node
		url := fmt.Sprintf("https://%s/metrics", kubeletHostPort(n))
		families, err := probes.SecurePortFamilies(ctx, r.Config, "kubelet on "+n.Name, url)
		var g probes.Gates
		if err == nil {
			g, err = probes.GatesOf(families)
		}
		if err != nil {
			errors[componentKubelet]++
			continue
		}
		prints = append(prints, fingerprint{componentKubelet, k.pool, k.minor, Fingerprint(g)})
	}
	r.mu.Lock()
	r.prints, r.errors = prints, errors
	r.mu.Unlock()
}

// sampledKubelet is a node whose kubelet a round reads, with its pool and minor.
type sampledKubelet struct {
	node        *corev1.Node
	pool, minor string
}

// sampleKubelets is the first Ready node by name of each pool and minor.
func (r *GateReader) sampleKubelets() []sampledKubelet {
	nodes, err := r.Nodes.List(labels.Everything())
	if err != nil {
		return nil
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	label := poolLabel(nodes, r.PoolLabel)
	picked := map[[2]string]bool{}
	var out []sampledKubelet
	for _, n := range nodes {
		k := sampledKubelet{n, PoolOf(n, label), kubeversion.MinorOf(n.Status.NodeInfo.KubeletVersion)}
		if !picked[[2]string{k.pool, k.minor}] && wait.NodeReady(*n) && kubeletHostPort(n) != "" {
			picked[[2]string{k.pool, k.minor}] = true
			out = append(out, k)
		}
	}
	return out
}

// Describe sends the gate series' descriptions.
func (r *GateReader) Describe(ch chan<- *prometheus.Desc) {
	ch <- descGateFingerprint
	ch <- descGateReadErrors
}

// Collect sends the last round's fingerprints.
func (r *GateReader) Collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.prints {
		ch <- prometheus.MustNewConstMetric(descGateFingerprint, prometheus.GaugeValue, 1, p.component, p.pool, p.minor, p.digest)
	}
	for c, n := range r.errors {
		ch <- prometheus.MustNewConstMetric(descGateReadErrors, prometheus.GaugeValue, float64(n), c)
	}
}

// Fingerprint digests the family gates a component reports: equal
// configurations of the feature's gates give equal fingerprints.
func Fingerprint(g probes.Gates) string {
	var parts []string
	for _, name := range fixtures.FamilyGates() {
		if g.Known(name) {
			parts = append(parts, fmt.Sprintf("%s=%t", name, g.Enabled(name)))
		}
	}
	return fixtures.Digest(parts)
}

// kubeletHostPort is the node's InternalIP and kubelet port.
func kubeletHostPort(n *corev1.Node) string {
	port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && port > 0 {
			if strings.Contains(a.Address, ":") {
				return fmt.Sprintf("[%s]:%d", a.Address, port)
			}
			return fmt.Sprintf("%s:%d", a.Address, port)
		}
	}
	return ""
}
