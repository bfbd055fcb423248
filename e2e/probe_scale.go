//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

// ProbeScaleSpecInput is the input of ProbeScaleSpec.
type ProbeScaleSpecInput struct {
	framework.SpecInput
	Sizes []int // fleet sizes, in order (the fleet grows)
}

// gkePool is the provider label the simulated fleet carries.
const gkePool = "cloud.google.com/gke-nodepool"

// ProbeScaleSpec measures the real binary on kwok fleets: a one-node kind
// cluster of the control plane's image runs kwok (built by ndfq) and a
// fleet of simulated nodes, one GKE-labelled pool per kubelet version of
// the topology, each declaring what the oracle says a kubelet of that
// version declares at its defaults. At each size the probe, as the base
// role (no node proxy: simulated kubelets have no endpoints), must be
// INCOMPLETE for the kubelet checks (and the exec routes) alone; its wall time, API requests and
// peak memory are recorded. Then one node's set is forged: HOLD mixed-pool.
func ProbeScaleSpec(_ context.Context, inputGetter func() ProbeScaleSpecInput) {
	in := inputGetter()
	t := in.Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("ProbeScaleSpec"); e = in.Env })

	claim := fmt.Sprintf("on kwok fleets of %v simulated nodes of kubelets %v, as the base role: INCOMPLETE for the kubelet checks, the node writes and the simulated nodes' missing Leases alone at each size, then HOLD mixed-pool after a forgery", in.Sizes, t.Versions())
	if why := refusableAtDefaults(t); why != "" {
		notApplicable(claim, why)
		return
	}
	if !slices.ContainsFunc(t.Versions(), func(v kubeversion.Version) bool { return !(fixtures.Kubelet{Version: v.String()}).Declares(restartAll) }) {
		notApplicable(claim, fmt.Sprintf("every kubelet of the topology (%v) declares %s at its defaults, and so would every simulated node: no probe pod could be refused, so the fleet cannot show the plugin at work (its kind cluster's scheduler serves /metrics on 127.0.0.1 alone)", t.Versions(), restartAll))
		return
	}
	It(claim, Label("scale"), func(ctx SpecContext) {
		By("bringing up a one-node cluster and kwok in it")
		c := e.UpKwokCluster(ctx, "ndfq-scale", t, "")
		c.ApplyManifest(ctx, "config/rbac/probe.yaml")

		probe := func(args ...string) (int, verdict.Verdict) {
			// Simulated nodes keep no Lease and heartbeat once: a freshness
			// past the fleet's age keeps them probed, and their freshness
			// is named unknown (INCOMPLETE), never assumed.
			code, out := framework.RunNDFQ(ctx, append([]string{"probe", "--kubeconfig", c.Kubeconfig, "--as", "ndfq-prober", "--tolerations", framework.KwokNode + "=fake:NoSchedule", "--freshness", "2h", "-o", "json"}, args...)...)
			return code, framework.ParseVerdict(code, out)
		}
		versions := t.Versions()
		var created int
		var rows []scaleRow
		for _, size := range in.Sizes {
			By(fmt.Sprintf("growing the fleet to %d simulated nodes", size))
			var batch []framework.FakeNode
			for i := created; i < size; i++ {
				v := versions[i%len(versions)]
				k := fixtures.Kubelet{Version: v.String()}
				batch = append(batch, framework.FakeNode{Name: fmt.Sprintf("kwok-%05d", i), Pool: "pool-" + strings.ReplaceAll(v.Minor(), ".", "-"), Kubelet: v.String(), Declared: k.MustDeclare()})
			}
			start := time.Now()
			c.CreateFakeNodes(ctx, gkePool, batch)
			created = size
			waitFleetReady(ctx, c, size)
			GinkgoWriter.Printf("fleet of %d nodes created and Ready in %s\n", size, time.Since(start).Round(time.Second))

			By(fmt.Sprintf("probing %d simulated nodes", size))
			start = time.Now()
			code, g := probe()
			wall := time.Since(start)
			Expect(code).To(Equal(3), "%s %v %v", g.Outcome, g.Reasons, g.Unchecked)
			Expect(g.Reasons).To(BeEmpty())
			Expect(g.Unchecked).To(ContainElement(HaveField("Check", verdict.ItemKubeletGates)))
			for _, u := range g.Unchecked {
				// The base role may not exec: the WebSocket route of each pool is unread too.
				Expect(u.Check).To(BeElementOf(verdict.ItemKubeletGates, verdict.ItemNodeWrites, verdict.ItemFreshness, verdict.ItemStreamingRoute), "only the kubelet checks, the exec routes, the node writes and the simulated nodes' missing Leases: %v", u)
			}
			Expect(g.PoolLabel.Label).To(Equal(gkePool))
			Expect(g.Nodes).To(HaveLen(size + 1))
			By(fmt.Sprintf("holding the %d simulated nodes to a fleet intent: pools by GKE selector, counts as minimums, no intent-mismatch", size))
			plan := writeScaleIntent(GinkgoT().TempDir(), size, versions, t.ControlPlaneVersion().Minor(), "")
			code, planned := probe("--intent", plan)
			Expect(code).To(Equal(3), "%s %v %v", planned.Outcome, planned.Reasons, planned.Unchecked)
			Expect(planned.Reasons).To(BeEmpty(), "the fleet as its intent plans it")
			Expect(planned.IntentChecked).To(BeTrue())
			By(fmt.Sprintf("scraping ndfq exporter over %d simulated nodes: its series stay pools x minors x features plus a few, whatever the size", size))
			exp := framework.ScrapeExporter(ctx, c.Kubeconfig)
			features := 0
			for _, v := range versions {
				features = max(features, len(fixtures.FeaturesOf(v.Minor())))
			}
			// Per pool and minor: the feature series and six others; per
			// pool two lease series; one for probe pods.
			pools := len(versions) + 1 // and the kind node's
			Expect(exp.Series).To(BeNumerically("<=", pools*(features+6)+pools*2+1), "ndfq_* series on %d nodes", size)
			rows = append(rows, scaleRow{Nodes: size, Pools: len(g.Pools), WallSeconds: wall.Seconds(), ProbeSeconds: g.TookSeconds, APIRequests: g.APIRequests, PeakRSSMiB: g.PeakRSSBytes >> 20,
				ExporterSeries: exp.Series, ExporterRSSMiB: exp.RSS >> 20, ExporterHeapMiB: exp.HeapUse >> 20})
			framework.Record(report.Observation{Kind: report.KindMeasure, Text: fmt.Sprintf("ndfq exporter on %d kwok nodes: %d ndfq_* series, %d MiB resident, %d MiB heap in use", size, exp.Series, exp.RSS>>20, exp.HeapUse>>20)})
			framework.Record(report.Observation{Kind: report.KindMeasure, Text: fmt.Sprintf("ndfq probe on %d kwok nodes (%d pools): %.1fs wall, %d API requests, %d MiB peak RSS, %s", size, len(g.Pools), wall.Seconds(), g.APIRequests, g.PeakRSSBytes>>20, g.Outcome)})
		}
		e.WriteBenchTable("bench-probe-scale", rows)

		By("the same intent with one pool's minor changed: HOLD intent-mismatch naming that pool")
		size := in.Sizes[len(in.Sizes)-1]
		// The newest pool: the minor before it is one the oracle knows.
		changed := "pool-" + strings.ReplaceAll(versions[len(versions)-1].Minor(), ".", "-")
		plan := writeScaleIntent(GinkgoT().TempDir(), size, versions, t.ControlPlaneVersion().Minor(), changed)
		code, drifted := probe("--intent", plan)
		Expect(code).To(Equal(1), "%s %v", drifted.Outcome, drifted.Reasons)
		Expect(drifted.Holds(verdict.IntentMismatch, changed, "")).To(BeTrue(), "%v", drifted.Reasons)
		for _, r := range drifted.Reasons {
			Expect(r.Pool).To(Equal(changed), "only the changed pool: %v", r)
		}

		By("forging one simulated node's declared set")
		Expect(framework.PatchDeclared(ctx, c.Clientset, "kwok-00000", []string{"NdfqForgedFeature"})).To(Succeed())
		code, g := probe()
		Expect(code).To(Equal(1), "%s %v", g.Outcome, g.Reasons)
		pool := "pool-" + strings.ReplaceAll(versions[0].Minor(), ".", "-")
		Expect(g.Holds(verdict.MixedPool, pool, "")).To(BeTrue(), "%v", g.Reasons)
	})
}

// writeScaleIntent writes the fleet intent of a simulated fleet of size
// nodes: one pool per kubelet version by its GKE label, the kind node as
// the control-plane pool, counts as minimums. The pool named changed is
// planned on the minor before its own (a plan the fleet drifted from).
func writeScaleIntent(dir string, size int, versions []kubeversion.Version, cpMinor, changed string) string {
	GinkgoHelper()
	f := verdict.FleetIntent{APIVersion: verdict.APIVersion, Kind: verdict.FleetIntentKind}
	one := 1
	f.Pools = append(f.Pools, verdict.FleetPool{Name: "control-plane", Selector: "node-role.kubernetes.io/control-plane",
		Nodes: verdict.FleetCount{Count: &one}, Kubelet: verdict.FleetKubelet{Versions: []string{cpMinor}}})
	for _, v := range versions {
		pool := "pool-" + strings.ReplaceAll(v.Minor(), ".", "-")
		n := size / len(versions)
		minor := v.Minor()
		if pool == changed {
			minor = kubeversion.PreviousMinor(minor)
		}
		f.Pools = append(f.Pools, verdict.FleetPool{Name: pool, Selector: gkePool + "=" + pool, Nodes: verdict.FleetCount{Min: &n},
			Kubelet: verdict.FleetKubelet{Versions: []string{minor}}})
	}
	data, err := yaml.Marshal(f)
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(dir, "fleet.yaml")
	Expect(os.WriteFile(path, data, 0o644)).To(Succeed())
	return path
}

// scaleRow is one size's cost, as docs/performance.md reports it.
type scaleRow struct {
	Nodes        int     `json:"nodes"`
	Pools        int     `json:"pools"`
	WallSeconds  float64 `json:"wallSeconds"`
	ProbeSeconds float64 `json:"probeSeconds"`
	APIRequests  int64   `json:"apiRequests"`
	PeakRSSMiB   int64   `json:"peakRSSMiB"`
	// The exporter's scrape at this size.
	ExporterSeries  int   `json:"exporterSeries"`
	ExporterRSSMiB  int64 `json:"exporterRSSMiB"`
	ExporterHeapMiB int64 `json:"exporterHeapMiB"`
}

// waitFleetReady waits (wait-nodes) until kwok has made want simulated nodes Ready.
func waitFleetReady(ctx context.Context, c *framework.PlainCluster, want int) {
	GinkgoHelper()
	Expect(wait.Until(ctx, wait.Nodes, fmt.Sprintf("%d simulated nodes Ready", want), func(ctx context.Context) (bool, string, error) {
		list, err := c.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
		if err != nil {
			return false, err.Error(), nil
		}
		ready := 0
		for _, n := range list.Items {
			if slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
				return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
			}) {
				ready++
			}
		}
		return ready == want, fmt.Sprintf("%d/%d Ready", ready, want), nil
	})).To(Succeed())
}

// scaleSizes reads NDFQ_SCALE_SIZES ("100,1000,5000"); CI runs 100.
func scaleSizes() []int { return sizesFromEnv("NDFQ_SCALE_SIZES", 100) }

// benchSerial is Serial under make bench (NDFQ_BENCH=true), where a
// spec's figures must not share the machine with another spec's work.
func benchSerial() []any {
	if os.Getenv("NDFQ_BENCH") == "true" {
		return []any{Serial}
	}
	return nil
}

// benchSizes reads NDFQ_BENCH_SIZES ("1000,5000"); CI runs 200.
func benchSizes() []int { return sizesFromEnv("NDFQ_BENCH_SIZES", 200) }

// benchPods reads NDFQ_BENCH_PODS, the pods per bench run; CI places 200.
func benchPods() int { return sizesFromEnv("NDFQ_BENCH_PODS", 200)[0] }

// sizesFromEnv reads a comma-separated list of positive counts.
func sizesFromEnv(name string, def int) []int {
	raw := os.Getenv(name)
	if raw == "" {
		return []int{def}
	}
	var out []int
	for _, f := range strings.Split(raw, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			panic(fmt.Sprintf("%s %q: want positive counts such as 100,1000,5000", name, raw))
		}
		out = append(out, n)
	}
	return out
}
