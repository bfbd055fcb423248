package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

// ProbeCLI runs the real ndfq binary's probe against the cluster under
// test and returns its exit code and stdout.
func (e *Env) ProbeCLI(ctx context.Context, args ...string) (int, string) {
	GinkgoHelper()
	// The topology is the fleet's plan: a kubelet, apiserver or scheduler
	// that drifted from it holds. The plan's extra schedulers that keep the
	// plugin are probed too (the others are not applicable to it).
	scope := []string{"--intent", e.Settings.Topology, "--intent-control-plane-version", e.Settings.KubernetesVersion}
	for _, s := range e.Topology.ControlPlane.ExtraSchedulers {
		if !s.IgnoresDeclarations {
			scope = append(scope, "--scheduler-name", s.Name)
		}
	}
	return e.probeCLI(ctx, scope, args)
}

// probeCLI runs `ndfq probe` on the cluster under test, with its scope
// (the fleet's plan, or a node selector) and the spec's args.
func (e *Env) probeCLI(ctx context.Context, scope, args []string) (int, string) {
	GinkgoHelper()
	// The next spec may drain or restart a kubelet: the probe's pods must be gone first.
	base := []string{"probe", "--kubeconfig", e.Shared.Kubeconfig, "--wait-cleanup"}
	if url := e.probeSchedulerURL(); url != "" {
		base = append(base, "--scheduler-metrics-url", url)
	}
	return RunNDFQ(ctx, slices.Concat(base, scope, args)...)
}

// probeSchedulerURL is the scheduler /metrics a probe is given: none on an
// HA control plane, whose first node's scheduler may be a standby (leader
// election is on there; the probe then says INCOMPLETE), so the probe
// finds the leader among the kube-scheduler pods itself.
func (e *Env) probeSchedulerURL() string {
	if e.Topology.ControlPlaneCount() > 1 {
		return ""
	}
	return e.Shared.SchedulerMetricURL
}

// ProbeCLIOn runs the real binary on these pools' nodes alone (-l), without
// the fleet's plan (--intent counts every pool's nodes), accepting that
// slice as the verdict's scope (--accept-partial): for claims about one
// pool or about the probe's own permissions, each run a fraction of a
// whole-fleet one. The GO spec and the in-cluster Job run on the fleet.
func (e *Env) ProbeCLIOn(ctx context.Context, pools []string, args ...string) (int, string) {
	GinkgoHelper()
	Expect(pools).NotTo(BeEmpty(), "pools to probe")
	return e.probeCLI(ctx, []string{"--node-selector", fmt.Sprintf("%s in (%s)", topology.PoolLabel, strings.Join(pools, ",")), "--accept-partial"}, args)
}

// ProbeVerdictOn is ProbeCLIOn's verdict (-o json).
func (e *Env) ProbeVerdictOn(ctx context.Context, pools []string, args ...string) (int, verdict.Verdict) {
	GinkgoHelper()
	code, out := e.ProbeCLIOn(ctx, pools, append(args, "-o", "json")...)
	return code, ParseVerdict(code, out)
}

// ndfqBin is the binary under test: $NDFQ_BIN, or the repository's bin/ndfq.
func ndfqBin() string {
	if bin := os.Getenv("NDFQ_BIN"); bin != "" {
		return bin
	}
	bin, _ := filepath.Abs(filepath.Join("..", "bin", "ndfq"))
	return bin
}

// RunNDFQ runs the real ndfq binary and returns its exit code and stdout.
func RunNDFQ(ctx context.Context, args ...string) (int, string) {
	GinkgoHelper()
	bin := ndfqBin()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else {
		Expect(err).NotTo(HaveOccurred(), "run %s", bin)
	}
	GinkgoWriter.Printf("ndfq %s -> exit %d\n%s\n%s\n", strings.Join(args, " "), code, out.String(), stderr.String())
	return code, out.String()
}

// ProbeVerdict runs the real binary with -o json and returns its exit
// code and verdict, which specs query by typed condition.
func (e *Env) ProbeVerdict(ctx context.Context, args ...string) (int, verdict.Verdict) {
	GinkgoHelper()
	code, out := e.ProbeCLI(ctx, append(args, "-o", "json")...)
	return code, ParseVerdict(code, out)
}

// ParseVerdict reads `ndfq probe -o json`'s output.
func ParseVerdict(code int, out string) verdict.Verdict {
	GinkgoHelper()
	var v verdict.Verdict
	Expect(json.Unmarshal([]byte(out), &v)).To(Succeed(), "ndfq probe -o json (exit %d) printed:\n%s", code, out)
	return v
}

// ExpectHold is a HOLD (exit 1) on condition naming the pool's node, from
// a probe of that pool alone.
func (e *Env) ExpectHold(ctx context.Context, c verdict.Condition, pool, node string, args ...string) {
	GinkgoHelper()
	code, g := e.ProbeVerdictOn(ctx, []string{pool}, args...)
	Expect(code).To(Equal(1), "probe verdict %s: %v", g.Outcome, g.Reasons)
	Expect(g.Holds(c, pool, node)).To(BeTrue(), "the probe should hold on %s [%s/%s]; it said %s %v", c, pool, node, g.Outcome, g.Reasons)
}

// StageProbe runs the probe workload in-process, applies the stop
// conditions and checks that control pods were placed everywhere.
func (e *Env) StageProbe(ctx context.Context, stage string) verdict.Verdict {
	GinkgoHelper()
	run, err := probes.Probe(ctx, probes.RunInput{
		Config: e.Cluster.Client.RESTConfig(), PoolLabel: topology.PoolLabel, NamespacePrefix: "ndfq-stage", WaitCleanup: true,
		SchedulerURL: e.probeSchedulerURL(), Freshness: verdict.DefaultThresholds.Freshness,
		Progress: func(format string, args ...any) { GinkgoWriter.Printf(format+"\n", args...) },
	})
	Expect(err).NotTo(HaveOccurred())
	g := verdict.Evaluate(run, verdict.Policy{Thresholds: verdict.DefaultThresholds})
	GinkgoWriter.Printf("stage %q: %s %v\n", stage, g.Outcome, g.Reasons)
	Record(report.Observation{Kind: report.KindMeasure, Text: fmt.Sprintf("rollout stage %s: %s %v", stage, g.Outcome, g.Fired())})
	for _, p := range run.Placements {
		if p.Feature == "" {
			Expect(p.Bound).To(BeTrue(), "stage %s: a control pod was refused on %s: %s", stage, p.Pool, p.Message)
		}
	}
	return g
}
