package exporter

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
)

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func node(name, pool, version string, declared ...string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{topology.PoolLabel: pool}},
		Status:     corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: version}, DeclaredFeatures: declared},
	}
}

func lease(name string, age time.Duration) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease},
		Spec:       coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now.Add(-age)}, LeaseDurationSeconds: ptr.To[int32](40)},
	}
}

func collector(t *testing.T, nodes []*corev1.Node, leases []*coordinationv1.Lease) *Collector {
	t.Helper()
	ni := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	li := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, n := range nodes {
		if err := ni.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range leases {
		if err := li.Add(l); err != nil {
			t.Fatal(err)
		}
	}
	return &Collector{
		Nodes:  corelisters.NewNodeLister(ni),
		Leases: coordlisters.NewLeaseLister(li).Leases(corev1.NamespaceNodeLease),
		Now:    func() time.Time { return now },
	}
}

func TestCollectorValues(t *testing.T) {
	want37 := fixtures.Kubelet{Version: "1.37.2"}.MustDeclare()
	c := collector(t, []*corev1.Node{
		node("a1", "current", "v1.37.2", want37...),
		node("a2", "current", "v1.37.2"), // publishes by default, reports nothing
		node("a3", "current", "v1.37.2", append([]string{"ForgedFeature"}, want37...)...),
		node("b1", "alpha", "v1.35.4"), // 1.35 publishes only with the alpha gate on
		node("c1", "old", "v1.34.4"),
	}, []*coordinationv1.Lease{lease("a1", 5*time.Second), lease("a2", 90*time.Second), lease("b1", time.Second), lease("gone", time.Hour)})
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, name := range []string{"probe-a", "probe-b"} {
		if err := pods.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ndfq-probe-x"}}); err != nil {
			t.Fatal(err)
		}
	}
	c.ProbePods = corelisters.NewPodLister(pods)
	text, err := testutil.CollectAndFormat(c, expfmt.TypeTextPlain, MetricNames...)
	if err != nil {
		t.Fatal(err)
	}
	expect := func(metric, labels string, value float64) {
		t.Helper()
		series := metric
		if labels != "" {
			series += "{" + labels + "}"
		}
		if line := fmt.Sprintf("%s %g\n", series, value); !strings.Contains(string(text), line) {
			t.Errorf("want %q in\n%s", line, text)
		}
	}
	expect(MetricNodes, `minor="1.37",pool="current"`, 3)
	expect(MetricProbePods, "", 2)
	expect(MetricMissingReport, `minor="1.37",pool="current"`, 1)
	expect(MetricMissingReport, `minor="1.35",pool="alpha"`, 0)
	expect(MetricMissingReport, `minor="1.34",pool="old"`, 0)
	expect(MetricUnregistered, `minor="1.37",pool="current"`, 1)
	expect(MetricDeclaring, fmt.Sprintf(`feature="%s",minor="1.37",pool="current"`, want37[0]), 2)
	expect(MetricFeatureSets, `minor="1.37",pool="current"`, 3)
	expect(MetricLeaseAge, `pool="current"`, 90)
	expect(MetricLeaseStale, `pool="current"`, 1)
	expect(MetricLeaseStale, `pool="alpha"`, 0)
	for _, leak := range []string{"ForgedFeature", "a1", "a2", "gone"} {
		if strings.Contains(string(text), `"`+leak+`"`) {
			t.Errorf("a label value %q reached the series:\n%s", leak, text)
		}
	}
}

// TestCardinalityBounded holds the series count to pools x features x
// minors plus a few per pool and minor, whatever the fleet's size.
func TestCardinalityBounded(t *testing.T) {
	pools := []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"}
	versions := []string{"v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2"}
	features := 0
	for _, v := range versions {
		features = max(features, len(featureNames(v[1:5])))
	}
	bound := len(pools)*len(versions)*(features+5) + 2*len(pools)
	for _, size := range []int{1000, 5000} {
		var nodes []*corev1.Node
		var leases []*coordinationv1.Lease
		for i := range size {
			v := versions[i%len(versions)]
			declared := fixtures.Kubelet{Version: v}.MustDeclare()
			if i%7 == 0 && len(declared) > 0 {
				declared = declared[1:] // mid-rollout: another set
			}
			n := node(fmt.Sprintf("n%05d", i), pools[i%len(pools)], v, declared...)
			n.Status.DeclaredFeatures = append(n.Status.DeclaredFeatures, fmt.Sprintf("Forged%d", i))
			nodes, leases = append(nodes, n), append(leases, lease(n.Name, time.Duration(i)*time.Millisecond))
		}
		got := testutil.CollectAndCount(collector(t, nodes, leases))
		if got > bound {
			t.Errorf("%d nodes: %d series, want at most %d (pools %d x minors %d x (features %d + 5) + 2 x pools)", size, got, bound, len(pools), len(versions), features)
		}
		t.Logf("%d nodes: %d series (bound %d)", size, got, bound)
	}
}

var _ prometheus.Collector = (*Collector)(nil)
