//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

// ProbeCLISpecInput is the input of ProbeCLISpec.
type ProbeCLISpecInput struct{ framework.SpecInput }

// ProbeCLISpec runs the real ndfq binary as a rollout gate: GO on the sound
// cluster, HOLD naming the node once a declaration is forged, on the least
// privilege config/rbac/ grants, and a second scheduler without the plugin
// caught. (Its HOLD on a stopped kubelet is in the stopped-kubelet wave.)
func ProbeCLISpec(_ context.Context, inputGetter func() ProbeCLISpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("ProbeCLISpec"); e = in.Env })

	// Permissions do not depend on how many pools there are: the
	// least-privilege runs probe one publishing pool, and the oldest pool
	// so that the plugin and the validator have something to refuse (a
	// slice where nothing can be refused is INCOMPLETE, never GO).
	rbacPool, ok := framework.PoolWhere(t.Workers, framework.Publishes)
	if !ok {
		rbacPool, _ = framework.PoolWhere(t.Workers, framework.Any)
	}
	rbacPools := []string{rbacPool.Name}
	if oldest := framework.OldestPool(t.Workers); oldest.Name != rbacPool.Name {
		rbacPools = append(rbacPools, oldest.Name)
	}
	// Where the default scheduler refuses a pod that needs the feature, a
	// second one without the plugin binds it: the probe must name it. A
	// fully rolled-out fleet (pods can ask for the feature, no pool lacks
	// it) shows the plugin and the validator only on the synthetic node.
	refusing, whyNot := refusedPools(claims.Matrix(t), restartAll)
	// Pools of one minor (ha-1.37's current and lean): the oldest is no
	// older, so a pool that refuses joins the slice by name.
	if len(refusing) > 0 && !slices.ContainsFunc(rbacPools, func(p string) bool { return slices.Contains(refusing, p) }) {
		rbacPools = append(rbacPools, refusing[0])
	}
	rolledOut := len(refusing) == 0 && placementApplies(claims.Matrix(t), restartAll)
	var notExercised []any // what the probed slice leaves unseen without the synthetic-node grant
	if !slices.ContainsFunc(rbacPools, func(p string) bool { return slices.Contains(refusing, p) }) && rolledOut {
		notExercised = []any{HaveField("Check", verdict.ItemPluginNotExercised), HaveField("Check", verdict.ItemValidatorNotExercised)}
	}

	// The whole-fleet runs (this one, the Job) are Serial: ~90 probe pods
	// beside the parallel specs pushed the load average past 100 on 2 cores
	// and the scheduler's own decision times to 34 s. The Job and the
	// least-privilege spec apply config/rbac/ under the same names: the one
	// runs after every parallel spec, the other among them.
	It("says GO (exit 0) with a per-pool table on the sound cluster", Serial, func(ctx SpecContext) {
		// One run (each is ~90 probe pods): text on stdout, JSON beside it.
		jsonPath := filepath.Join(GinkgoT().TempDir(), "probe.json")
		code, out := e.ProbeCLI(ctx, "--json", jsonPath)
		Expect(code).To(Equal(0), "probe verdict:\n%s", out)
		Expect(out).To(HavePrefix(string(verdict.GO)))
		for _, p := range t.Pools() {
			Expect(out).To(ContainSubstring(p.Name), "per-pool table")
		}
		js, err := os.ReadFile(jsonPath)
		Expect(err).NotTo(HaveOccurred(), "--json %s", jsonPath)
		Expect(verdict.ValidateProbeJSON(js)).To(Succeed(), "--json against verdict/probe.schema.json")
		g := framework.ParseVerdict(code, string(js))
		Expect(g.Outcome).To(Equal(verdict.GO), "the JSON's verdict is the text's")
		Expect(g.NodeWrites).To(ContainSubstring("refused by NodeRestriction"), "the node-write check was made and held")
		Expect(out).To(ContainSubstring("node writes: as system:node:"))
		if rolledOut {
			Expect(g.SyntheticNode).To(ContainSubstring("declares nothing"), "a fully rolled-out fleet: the plugin and the validator seen on the synthetic node")
			nodes, err := e.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: probes.RunLabel})
			Expect(err).NotTo(HaveOccurred())
			Expect(nodes.Items).To(BeEmpty(), "the synthetic node is gone after the run")
		}
	})

	if silent, ok := framework.PoolWhere(t.Pools(), framework.Silent); ok {
		It(fmt.Sprintf("says HOLD (exit 1) naming the node after a declaration is forged on %s", framework.PoolDesc(silent)), disruptive, Serial, func(ctx SpecContext) {
			node, _ := e.PoolNode(ctx, silent)
			Expect(e.PatchDeclared(ctx, node, []string{restartAll})).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(e.PatchDeclared(ctx, node, nil)).To(Succeed()) })
			e.ExpectHold(ctx, verdict.DeclaredButNotEnabled, silent.Name, node)
			framework.Record(report.Observation{Kind: report.KindMeasure, Text: "ndfq probe held on a forged declaration on " + node})
		})
	}

	// A synthetic node (a fully rolled-out slice) is no other spec's to see.
	var rbacDecorators []any
	if len(notExercised) > 0 {
		rbacDecorators = append(rbacDecorators, Serial)
	}
	It(fmt.Sprintf("runs on the least privilege config/rbac/ grants: INCOMPLETE naming the kubelet checks without nodes/proxy and the node writes without impersonation, GO with both, and in one existing namespace (probing %v)", rbacPools), rbacDecorators, func(ctx SpecContext) {
		const prober, namespaced = "ndfq-prober", "ndfq-prober-namespaced"
		on := rbacPools
		code, _ := e.ProbeCLIOn(ctx, on, "--as", "ndfq-nobody")
		Expect(code).To(Equal(2), "an identity without the roles must be an error, not a verdict")

		By("binding only the base role (config/rbac/probe.yaml): no kubelet checks, no exec routes, no node writes")
		e.ApplyManifest(ctx, "config/rbac/probe.yaml")
		e.WaitAuthorized(ctx, prober, "list", "nodes", "", "")
		code, g := e.ProbeVerdictOn(ctx, on, "--as", prober)
		Expect(code).To(Equal(3), "%s %v %v", g.Outcome, g.Reasons, g.Unchecked)
		want := append([]any{HaveField("Check", verdict.ItemKubeletGates), HaveField("Check", verdict.ItemNodeWrites)}, notExercised...)
		if fixtures.RoutesStreams(t.ControlPlaneVersion().Minor()) && t.APIServer().Enables(fixtures.TranslateStreamCloseWebsocketRequests) {
			for range on { // one exec route per probed pool, each unread without pods/exec
				want = append(want, HaveField("Check", verdict.ItemStreamingRoute))
			}
		}
		Expect(g.Unchecked).To(ConsistOf(want...))
		code, g = e.ProbeVerdictOn(ctx, on, "--as", prober, "--hold-unchecked")
		Expect(code).To(Equal(1))
		Expect(g.Holds(verdict.CheckNotMade, "", "")).To(BeTrue(), "%v", g.Reasons)

		By("adding the kubelet role (config/rbac/kubelet.yaml): the node writes are still unchecked")
		e.ApplyManifest(ctx, "config/rbac/kubelet.yaml")
		e.WaitAuthorized(ctx, prober, "get", "nodes", "proxy", "")
		code, g = e.ProbeVerdictOn(ctx, on, "--as", prober)
		Expect(code).To(Equal(3), "%s %v %v", g.Outcome, g.Reasons, g.Unchecked)
		Expect(g.Unchecked).To(ConsistOf(append([]any{HaveField("Check", verdict.ItemNodeWrites)}, notExercised...)...))

		By("adding the node-write role (config/rbac/node-writes.yaml)")
		e.ApplyManifest(ctx, "config/rbac/node-writes.yaml")
		e.WaitAuthorized(ctx, prober, "impersonate", "users", "", "")
		code, g = e.ProbeVerdictOn(ctx, on, "--as", prober)
		if len(notExercised) > 0 {
			Expect(code).To(Equal(3), "%s %v %v", g.Outcome, g.Reasons, g.Unchecked)
			Expect(g.Unchecked).To(ConsistOf(notExercised...), "no probed pool lacks a feature: the plugin and the validator unseen, naming the grant")
			for _, u := range g.Unchecked {
				Expect(u.Reason).To(ContainSubstring("config/rbac/synthetic-node.yaml"))
			}
			By("adding the synthetic-node role (config/rbac/synthetic-node.yaml): a fully rolled-out slice")
			e.ApplyManifest(ctx, "config/rbac/synthetic-node.yaml")
			e.WaitAuthorized(ctx, prober, "create", "nodes", "", "")
			code, g = e.ProbeVerdictOn(ctx, on, "--as", prober)
			Expect(g.SyntheticNode).To(ContainSubstring("declares nothing"), "the plugin and the validator seen on the synthetic node")
		}
		Expect(code).To(Equal(0), "%s %v %v", g.Outcome, g.Reasons, g.Unchecked)

		By("the namespaced mode (config/rbac/namespaced.yaml): pods only in ndfq-probe, no namespace made")
		e.ApplyManifest(ctx, "config/rbac/namespaced.yaml")
		e.WaitAuthorized(ctx, namespaced, "create", "pods", "", "ndfq-probe")
		code, out := e.ProbeCLIOn(ctx, on, "--as", namespaced)
		Expect(code).To(Equal(2), "without -n it needs to create namespaces:\n%s", out)
		code, g = e.ProbeVerdictOn(ctx, on, "--as", namespaced, "-n", "ndfq-probe")
		Expect(code).To(Equal(3), "%s %v %v", g.Outcome, g.Reasons, g.Unchecked)
		Expect(g.Namespace).To(Equal("ndfq-probe"))
		Expect(g.Reasons).To(BeEmpty())
		Expect(e.PodsIn(ctx, "ndfq-probe")).To(BeEmpty(), "the probe deletes its pods from a namespace it keeps")
		framework.Record(report.Observation{Kind: report.KindMeasure, Text: "ndfq probe ran as " + prober + " (base role: INCOMPLETE, + kubelet role: INCOMPLETE, + node-write role: GO) and as " + namespaced + " in one namespace (INCOMPLETE)"})
	})

	It("runs in the cluster as the Job of config/job/ from ndfq's own image by digest, and saves its report and JUnit for the pipeline", Serial, func(ctx SpecContext) {
		const ns, job, results = "ndfq-probe", "ndfq-probe", "ndfq-probe-results"
		By("loading ndfq's own image (make probe-image: an OCI archive naming it by digest) into every node")
		Expect(e.Cluster.LoadImageArchive(framework.ProbeImageArchive())).To(Succeed())
		e.ApplyManifest(ctx, "config/rbac/probe.yaml")
		e.ApplyManifest(ctx, "config/rbac/kubelet.yaml")
		e.ApplyManifest(ctx, "config/rbac/node-writes.yaml")
		e.ApplyManifest(ctx, "config/rbac/synthetic-node.yaml")
		By("handing the Job the oracle's checks of the releases this fleet runs (ConfigMap ndfq-oracle-checks, as config/job/ says)")
		e.OracleChecksConfigMap(ctx, ns, "ndfq-oracle-checks")
		By("running config/job/'s Job with the image by digest, as a release ships it")
		e.ApplyManifest(ctx, framework.ProbeJobManifest())
		By("waiting for the Job to finish")
		done := e.WaitJob(ctx, ns, job)
		cm, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, results, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred(), "the Job's results (Job finished: %s)", done)
		// In the cluster the Job reads no scheduler metrics: the plugin's
		// refusal is the scheduler's answer (on a fully rolled-out fleet, on
		// the synthetic node), and without one it is unchecked.
		want, wantDone := verdict.GO, batchv1.JobComplete
		if len(refusing) == 0 && !rolledOut {
			want, wantDone = verdict.INCOMPLETE, batchv1.JobFailed
		}
		Expect(cm.Data["verdict"]).To(Equal(string(want)), "report.json:\n%s", cm.Data["report.json"])
		Expect(done).To(Equal(wantDone), "GO completes the Job; INCOMPLETE (exit 3) fails it")
		if want == verdict.INCOMPLETE {
			var v verdict.Verdict
			Expect(json.Unmarshal([]byte(cm.Data["report.json"]), &v)).To(Succeed())
			Expect(v.Reasons).To(BeEmpty())
			Expect(v.Unchecked).To(ConsistOf(HaveField("Check", "scheduler-gates")), "only the scheduler, for want of a refusal (%s)", whyNot)
		}
		Expect(verdict.ValidateProbeJSON([]byte(cm.Data["report.json"]))).To(Succeed())
		junit := filepath.Join(GinkgoT().TempDir(), "junit.xml")
		Expect(os.WriteFile(junit, []byte(cm.Data["junit.xml"]), 0o644)).To(Succeed())
		counts, err := report.CountJUnit(junit)
		Expect(err).NotTo(HaveOccurred())
		if want == verdict.GO {
			Expect(counts.Failed).To(BeZero(), "%s", cm.Data["junit.xml"])
		} else {
			// A JUnit-gated pipeline must not pass INCOMPLETE: the unchecked item fails its cases.
			Expect(counts.Failed).To(BeNumerically(">", 0), "%s", cm.Data["junit.xml"])
			Expect(cm.Data["junit.xml"]).To(ContainSubstring(`type="unchecked"`))
			Expect(cm.Data["junit.xml"]).NotTo(ContainSubstring(`type="failed"`), "no condition fired")
		}
		Expect(counts.Passed).To(BeNumerically(">", 0))
		framework.Record(report.Observation{Kind: report.KindMeasure, Text: fmt.Sprintf("the in-cluster probe Job said %s; its JUnit: %s", cm.Data["verdict"], counts)})
	})

	It("reads every kubelet's runtime over its CRI from a pod of ndfq's image on its node (--cri-image), and each report is what crictl on the node says", Serial, func(ctx SpecContext) {
		By("loading ndfq's own image into every node")
		Expect(e.Cluster.LoadImageArchive(framework.ProbeImageArchive())).To(Succeed())
		code, out := e.ProbeCLI(ctx, "--cri-image", framework.ProbeImageRef(ctx), "-o", "json")
		g := framework.ParseVerdict(code, out)
		Expect(g.Outcome).To(Equal(verdict.GO), "%v %v", g.Reasons, g.Unchecked)
		nodes := 0
		for _, p := range t.Pools() {
			nodes += p.Count
		}
		Expect(g.Nodes).To(HaveLen(nodes), "every node of the topology")
		for _, n := range g.Nodes {
			By("node " + n.Node + ": the reader pod's report against crictl info's")
			Expect(n.RuntimeFrom).To(Equal(probes.RuntimeCRI), "node %s: %s", n.Node, n.RuntimeUnread)
			Expect(n.RuntimeReport).To(Equal(e.CRIReport(n.Node).Reported()), "node %s (%s)", n.Node, n.Runtime)
		}
		Expect(g.Runtimes).To(Equal(fmt.Sprintf("read over the CRI on %d nodes", len(g.Nodes))))
		framework.Record(report.Observation{Kind: report.KindMeasure, Text: fmt.Sprintf("ndfq probe --cri-image read %d runtimes on their nodes, each as crictl reports it", len(g.Nodes))})
	})

	claim := "holds scheduler-ignores-declarations naming a second scheduler without the NodeDeclaredFeatures plugin, and not one with it"
	if len(refusing) == 0 {
		notApplicable(claim, whyNot)
	} else {
		It(fmt.Sprintf("%s, on pools %v", claim, refusing), func(ctx SpecContext) {
			const without, with = "ndfq-no-declarations", "ndfq-declarations"
			e.RunSecondScheduler(ctx, framework.SecondScheduler{without: false, with: true})
			code, g := e.ProbeVerdictOn(ctx, refusing, "--scheduler-name", without, "--scheduler-name", with)
			Expect(code).To(Equal(1), "%s %v", g.Outcome, g.Reasons)
			Expect(g.Fired()).To(Equal([]verdict.Condition{verdict.SchedulerIgnoresDecl}), "%v", g.Reasons)
			for _, pool := range refusing {
				Expect(g.Holds(verdict.SchedulerIgnoresDecl, pool, "")).To(BeTrue(), "pool %s: %v", pool, g.Reasons)
			}
			// Every scheduling probe goes through both schedulers: each
			// reason is the one without the plugin binding a pod where the
			// feature it needs is not declared.
			for _, r := range g.Reasons {
				Expect(r.Detail).To(ContainSubstring("scheduler "+without+" bound a pod needing "), "only the scheduler without the plugin")
			}
			Expect(g.Reasons).To(ContainElement(HaveField("Detail", ContainSubstring("scheduler "+without+" bound a pod needing "+restartAll))))
			framework.Record(report.Observation{Kind: report.KindMeasure, Feature: restartAll,
				Text: fmt.Sprintf("ndfq probe held scheduler-ignores-declarations on %s (NodeDeclaredFeatures plugin disabled) on pools %v and passed %s (plugin on)", without, refusing, with)})
		})
	}
}
