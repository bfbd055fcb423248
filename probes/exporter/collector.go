// Package exporter is ndfq's in-cluster exporter: what operators watch
// between probe runs, from the nodes' own status and leases, with bounded
// cardinality. Labels are pool, kubelet minor and feature: never a node
// name, never a feature name the registry does not have (a forged name
// would otherwise mint series).
package exporter

import (
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	coordlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/probes"
)

// Metric names, shared with config/prometheus/ and docs/rollout.md.
const (
	MetricNodes           = "ndfq_nodes"
	MetricDeclaring       = "ndfq_nodes_declaring"
	MetricUnregistered    = "ndfq_nodes_declaring_unregistered"
	MetricMissingReport   = "ndfq_nodes_missing_report"
	MetricLeaseAge        = "ndfq_pool_lease_age_max_seconds"
	MetricLeaseStale      = "ndfq_nodes_lease_stale"
	MetricFeatureSet      = "ndfq_pool_feature_set_info"
	MetricFeatureSets     = "ndfq_pool_feature_sets"
	MetricGateFingerprint = "ndfq_gate_fingerprint_info"
	MetricGateReadErrors  = "ndfq_gate_read_errors"
	MetricProbePods       = "ndfq_probe_pods"
)

// MetricNames are every series name the exporter writes about the fleet.
var MetricNames = []string{MetricNodes, MetricDeclaring, MetricUnregistered, MetricMissingReport, MetricLeaseAge, MetricLeaseStale, MetricFeatureSet, MetricFeatureSets, MetricGateFingerprint, MetricGateReadErrors, MetricProbePods}

var (
	poolMinor = []string{"pool", "minor"}

	descNodes = prometheus.NewDesc(MetricNodes,
		"Nodes per pool and kubelet minor.", poolMinor, nil)
	descDeclaring = prometheus.NewDesc(MetricDeclaring,
		"Nodes that declare the feature in status.declaredFeatures, for every feature the minor's registry has.",
		[]string{"pool", "minor", "feature"}, nil)
	descUnregistered = prometheus.NewDesc(MetricUnregistered,
		"Nodes that declare a name their minor's registry does not have (forged or newer than the oracle).", poolMinor, nil)
	descMissing = prometheus.NewDesc(MetricMissingReport,
		"Nodes whose kubelet minor publishes declarations by default but which report none.", poolMinor, nil)
	descLeaseAge = prometheus.NewDesc(MetricLeaseAge,
		"Seconds since the pool's least recently renewed node lease: how old its freshest-possible declarations can be.", []string{"pool"}, nil)
	descLeaseStale = prometheus.NewDesc(MetricLeaseStale,
		"Nodes whose lease is older than its own duration: their declarations are no longer vouched for.", []string{"pool"}, nil)
	descFeatureSet = prometheus.NewDesc(MetricFeatureSet,
		"The feature set most of the pool's nodes of this minor declare, as a digest (value 1).", []string{"pool", "minor", "digest"}, nil)
	descProbePods = prometheus.NewDesc(MetricProbePods,
		"Pods an ndfq probe run made (label "+probes.RunLabel+"): while any exist, the probe's own refusals and rejections feed the scheduler's and apiservers' series, and the shipped alerts hold off.", nil, nil)
	descFeatureSets = prometheus.NewDesc(MetricFeatureSets,
		"Distinct declared sets among the pool's nodes of this minor (1 when uniform).", poolMinor, nil)
)

// Collector computes the series from informer caches at scrape time.
type Collector struct {
	Nodes  corelisters.NodeLister
	Leases coordlisters.LeaseNamespaceLister // kube-node-lease
	// ProbePods lists the pods labelled probes.RunLabel; nil: not watched.
	ProbePods corelisters.PodLister
	// PoolLabel names a node's pool; "" picks the first well-known label
	// any node carries, as the probe does.
	PoolLabel string
	Gates     *GateReader // nil: no gate fingerprints
	Now       func() time.Time
}

// Describe sends the static descriptions.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descNodes, descDeclaring, descUnregistered, descMissing, descLeaseAge, descLeaseStale, descFeatureSet, descFeatureSets, descProbePods} {
		ch <- d
	}
	if c.Gates != nil {
		c.Gates.Describe(ch)
	}
}

// group is the nodes of one pool and kubelet minor.
type group struct {
	nodes, unregistered, missing int
	declaring                    map[string]int
	sets                         map[string]int // digest -> nodes
}

// Collect sends one scrape's series.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	nodes, err := c.Nodes.List(labels.Everything())
	if err != nil {
		return
	}
	label := poolLabel(nodes, c.PoolLabel)
	groups := map[[2]string]*group{}
	poolOf := map[string]string{}
	for _, n := range nodes {
		pool := PoolOf(n, label)
		poolOf[n.Name] = pool
		minor := kubeversion.MinorOf(n.Status.NodeInfo.KubeletVersion)
		k := [2]string{pool, minor}
		g := groups[k]
		if g == nil {
			g = &group{declaring: map[string]int{}, sets: map[string]int{}}
			groups[k] = g
		}
		g.nodes++
		declared := n.Status.DeclaredFeatures
		if len(declared) == 0 && publishesByDefault(minor) {
			g.missing++
		}
		unregistered := false
		for _, f := range declared {
			if registered(minor, f) {
				g.declaring[f]++
			} else {
				unregistered = true
			}
		}
		if unregistered {
			g.unregistered++
		}
		g.sets[fixtures.Digest(declared)]++
	}
	for k, g := range groups {
		pool, minor := k[0], k[1]
		ch <- prometheus.MustNewConstMetric(descNodes, prometheus.GaugeValue, float64(g.nodes), pool, minor)
		ch <- prometheus.MustNewConstMetric(descUnregistered, prometheus.GaugeValue, float64(g.unregistered), pool, minor)
		ch <- prometheus.MustNewConstMetric(descMissing, prometheus.GaugeValue, float64(g.missing), pool, minor)
		for _, f := range featureNames(minor) {
			ch <- prometheus.MustNewConstMetric(descDeclaring, prometheus.GaugeValue, float64(g.declaring[f]), pool, minor, f)
		}
		ch <- prometheus.MustNewConstMetric(descFeatureSet, prometheus.GaugeValue, 1, pool, minor, mostCommon(g.sets))
		ch <- prometheus.MustNewConstMetric(descFeatureSets, prometheus.GaugeValue, float64(len(g.sets)), pool, minor)
	}
	c.collectLeases(ch, poolOf)
	if c.ProbePods != nil {
		if pods, err := c.ProbePods.List(labels.Everything()); err == nil {
			ch <- prometheus.MustNewConstMetric(descProbePods, prometheus.GaugeValue, float64(len(pods)))
		}
	}
	if c.Gates != nil {
		c.Gates.Collect(ch)
	}
}

// collectLeases sends each pool's lease freshness.
func (c *Collector) collectLeases(ch chan<- prometheus.Metric, poolOf map[string]string) {
	leases, err := c.Leases.List(labels.Everything())
	if err != nil {
		return
	}
	now := c.Now()
	oldest, stale := map[string]float64{}, map[string]int{}
	for _, pool := range poolOf {
		oldest[pool], stale[pool] = 0, 0
	}
	for _, l := range leases {
		pool, ok := poolOf[l.Name]
		if !ok {
			continue // a lease whose node is gone
		}
		age := leaseAge(l, now)
		oldest[pool] = max(oldest[pool], age.Seconds())
		if l.Spec.LeaseDurationSeconds != nil && age > time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second {
			stale[pool]++
		}
	}
	for pool := range oldest {
		ch <- prometheus.MustNewConstMetric(descLeaseAge, prometheus.GaugeValue, oldest[pool], pool)
		ch <- prometheus.MustNewConstMetric(descLeaseStale, prometheus.GaugeValue, float64(stale[pool]), pool)
	}
}

// leaseAge is how long ago the lease was renewed (acquired, if never renewed).
func leaseAge(l *coordinationv1.Lease, now time.Time) time.Duration {
	switch {
	case l.Spec.RenewTime != nil:
		return now.Sub(l.Spec.RenewTime.Time)
	case l.Spec.AcquireTime != nil:
		return now.Sub(l.Spec.AcquireTime.Time)
	}
	return now.Sub(l.CreationTimestamp.Time)
}

// poolLabel is the label pools are read from: the flag's, or the first
// well-known one any node carries, as the probe chooses.
func poolLabel(nodes []*corev1.Node, flag string) string {
	plain := make([]corev1.Node, len(nodes))
	for i, n := range nodes {
		plain[i] = *n
	}
	return probes.ChoosePoolLabel(plain, flag).Label
}

// PoolOf is the node's pool: its label value, or probes.Unlabelled.
func PoolOf(n *corev1.Node, label string) string {
	if v := n.Labels[label]; label != "" && v != "" {
		return v
	}
	return probes.Unlabelled
}

// publishesByDefault is whether a kubelet of this minor publishes
// declarations with its default gates: from the oracle, not the node.
func publishesByDefault(minor string) bool {
	return fixtures.Kubelet{Version: minor + ".0"}.Publishes()
}

// featureNames are the features the minor's registry has; for a minor the
// oracle does not know, every feature of any registry it knows.
func featureNames(minor string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range registryMinors(minor) {
		for _, f := range fixtures.FeaturesOf(m) {
			if !seen[f.Name] {
				seen[f.Name] = true
				out = append(out, f.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// registered is whether the name is one of featureNames(minor).
func registered(minor, name string) bool {
	for _, m := range registryMinors(minor) {
		if fixtures.Registers(m, name) {
			return true
		}
	}
	return false
}

// registryMinors is the minor itself when the oracle knows it, else all it knows.
func registryMinors(minor string) []string {
	if fixtures.KnownMinor(minor) == nil {
		return []string{minor}
	}
	return fixtures.Minors
}

// mostCommon is the digest most nodes share; ties go to the smaller digest.
func mostCommon(sets map[string]int) string {
	digests := make([]string, 0, len(sets))
	for d := range sets {
		digests = append(digests, d)
	}
	sort.Slice(digests, func(i, j int) bool {
		if sets[digests[i]] != sets[digests[j]] {
			return sets[digests[i]] > sets[digests[j]]
		}
		return digests[i] < digests[j]
	})
	return digests[0]
}
