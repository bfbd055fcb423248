package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/internal/buildinfo"
	"github.com/ndfq/ndfq/internal/progress"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/verdict"
)

func probeCommand() *cobra.Command {
	var kubeconfig, poolLabel, nodeSelector, image, output, schedulerURL, svg, junit, jsonFile, resultsCM, intentFile, intentCPVersion string
	var tolerations, schedulerNames []string
	var qps float32
	var burst, kubeletSample int
	var holdUnchecked, acceptPartial bool
	var intent *verdict.Intent
	var tols []corev1.Toleration
	overrides := &clientcmd.ConfigOverrides{}
	t := verdict.DefaultThresholds
	var loader clientcmd.ClientConfig
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Probe any cluster's Node Declared Features and print GO (exit 0), HOLD with reasons (exit 1), or INCOMPLETE naming the checks it could not make (exit 3); errors exit 2",
		Long: `probe reads every node's declaredFeatures and its kubelet's gates, the apiserver's
(and optionally the scheduler's) gates, then places probe pods and sends probe updates
per pool in a namespace it creates and removes (or the one -n names). It stores nothing
on Node objects: as one node's kubelet identity (impersonated) it asks, as dry runs, to
write that node's declarations and another's, which NodeRestriction must refuse. Pools are the values of --pool-label (by default the first well-known
pool label present: ndfq, GKE, EKS, AKS, Karpenter), sliced by kubelet version.
Probe pods run --image's own entrypoint (by default the pause image of the control
plane's minor, which every kubeadm node has): no shell, nothing to pull on most clusters.
Without permission to the node proxy (config/rbac/kubelet.yaml) the kubelet checks are
not made and the verdict is INCOMPLETE (HOLD with --hold-unchecked); so is the
node-write check without permission to impersonate (config/rbac/node-writes.yaml).`,
		Args: noArgs,
		// Flags are checked before anything connects to the cluster.
		PreRunE: func(*cobra.Command, []string) error {
			switch output {
			case "text", "json", "yaml", "markdown", "junit":
			default:
				return fmt.Errorf("--output %q: want text, json, yaml, markdown or junit", output)
			}
			switch {
			case t.Freshness <= 0:
				return fmt.Errorf("--freshness %s: want a positive duration", t.Freshness)
			case t.MaxMissingRate < 0 || t.MaxMissingRate > 1:
				return fmt.Errorf("--max-missing-rate %g: want a fraction from 0 to 1", t.MaxMissingRate)
			case t.MaxLatencyRatio < 1:
				return fmt.Errorf("--max-latency-ratio %g: want 1 or more", t.MaxLatencyRatio)
			case t.MinLatency < 0:
				return fmt.Errorf("--min-latency %s: want 0 or more", t.MinLatency)
			case qps <= 0:
				return fmt.Errorf("--qps %g: want more than 0", qps)
			case burst < 1:
				return fmt.Errorf("--burst %d: want 1 or more", burst)
			case kubeletSample < 0:
				return fmt.Errorf("--kubelet-sample %d: want 0 (every kubelet) or more", kubeletSample)
			}
			if n, err := strconv.Atoi(overrides.Timeout); err == nil && n >= 0 {
				// kubectl's plain seconds
			} else if d, err := time.ParseDuration(overrides.Timeout); err != nil || d < 0 {
				return fmt.Errorf("--request-timeout %q: want a duration such as 30s (0 for none)", overrides.Timeout)
			}
			if _, err := labels.Parse(nodeSelector); err != nil {
				return fmt.Errorf("--node-selector %q: %w", nodeSelector, err)
			}
			if image != "" {
				if _, err := name.ParseReference(image); err != nil {
					return fmt.Errorf("--image %q: %w", image, err)
				}
			}
			for _, s := range tolerations {
				tol, err := probes.ParseToleration(s)
				if err != nil {
					return fmt.Errorf("--tolerations: %w", err)
				}
				tols = append(tols, tol)
			}
			seen := map[string]bool{}
			for _, n := range schedulerNames {
				if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
					return fmt.Errorf("--scheduler-name %q: %s", n, strings.Join(errs, "; "))
				}
				if n == corev1.DefaultSchedulerName || seen[n] {
					return fmt.Errorf("--scheduler-name %q: given twice, or the default scheduler (always probed)", n)
				}
				seen[n] = true
			}
			if ns := overrides.Context.Namespace; ns != "" {
				if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
					return fmt.Errorf("--namespace %q: %s", ns, strings.Join(errs, "; "))
				}
			}
			if resultsCM != "" {
				if errs := validation.IsDNS1123Subdomain(resultsCM); len(errs) > 0 {
					return fmt.Errorf("--results-configmap %q: %s", resultsCM, strings.Join(errs, "; "))
				}
				if overrides.Context.Namespace == "" && os.Getenv("POD_NAMESPACE") == "" {
					return fmt.Errorf("--results-configmap %q: give its namespace with -n (or POD_NAMESPACE in a pod)", resultsCM)
				}
			}
			if intentFile != "" {
				plan, err := topology.LoadWith(intentFile, intentCPVersion)
				if err != nil {
					return fmt.Errorf("--intent: %w", err)
				}
				intent = intentOf(plan)
			}
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			rules.ExplicitPath = kubeconfig
			loader = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loader.ClientConfig()
			if err != nil {
				return fmt.Errorf("kubeconfig: %w", err)
			}
			contextName := overrides.CurrentContext
			if raw, err := loader.RawConfig(); err == nil && contextName == "" {
				contextName = raw.CurrentContext
			}
			cfg.QPS, cfg.Burst = qps, burst
			log := progress.New(cmd.ErrOrStderr())
			run, err := probes.Probe(cmd.Context(), probes.RunInput{
				Config: cfg, PoolLabel: poolLabel, NodeSelector: nodeSelector, Namespace: overrides.Context.Namespace, NamespacePrefix: "ndfq-probe",
				Image: image, Tolerations: tols, SchedulerNames: schedulerNames,
				SchedulerURL: schedulerURL, KubeletSample: kubeletSample, Freshness: t.Freshness, Progress: log.Printf,
			})
			if err != nil {
				var perm *probes.PermissionError
				if errors.As(err, &perm) {
					return perm
				}
				return err
			}
			gate := verdict.Evaluate(run, verdict.Policy{Thresholds: t, Intent: intent, AcceptPartial: acceptPartial, HoldUnchecked: holdUnchecked})
			gate.NDFQVersion, gate.Context, gate.PeakRSSBytes = buildinfo.Get().Version, contextName, peakRSS()
			if err := writeGate(cmd.OutOrStdout(), gate, output); err != nil {
				return err
			}
			if resultsCM != "" {
				ns := cmp.Or(overrides.Context.Namespace, os.Getenv("POD_NAMESPACE"))
				if err := saveResults(cmd.Context(), cfg, ns, resultsCM, gate); err != nil {
					return err
				}
				log.Printf("results in configmap %s/%s (report.json, junit.xml)", ns, resultsCM)
			}
			for path, form := range map[string]string{svg: "svg", junit: "junit", jsonFile: "json"} {
				if path == "" {
					continue
				}
				if err := writeGateFile(path, gate, form); err != nil {
					return err
				}
			}
			switch gate.Outcome {
			case verdict.HOLD:
				return errSilentFailure
			case verdict.INCOMPLETE:
				return errIncomplete
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	flags := clientcmd.RecommendedConfigOverrideFlags("")
	flags.Timeout.Default = "30s"
	flags.ContextOverrideFlags.Namespace.Description = "an existing namespace for the probe pods: none is created, only the run's pods are deleted after (default: a new namespace, removed after)"
	flags.AuthOverrideFlags.Impersonate.Description = "user to impersonate (check that config/rbac/ is enough)"
	clientcmd.BindOverrideFlags(overrides, f, flags)
	f.Float32Var(&qps, "qps", 20, "client queries per second to the apiserver")
	f.IntVar(&burst, "burst", 40, "client burst of queries to the apiserver")
	f.IntVar(&kubeletSample, "kubelet-sample", 0, "ask at most this many kubelets per pool, chosen at random, for their gates (0: every one); the others' declared sets are judged only against their pool's (mixed-pool)")
	f.StringVar(&poolLabel, "pool-label", "", "node label that names pools (default: the first of "+strings.Join(probes.WellKnownPoolLabels, ", ")+" that a node carries); pools are also sliced by kubelet version")
	f.StringVarP(&nodeSelector, "node-selector", "l", "", "label selector: probe only these nodes (e.g. pool=a,zone!=b)")
	f.StringVar(&image, "image", "", "probe pods' image, run with its own entrypoint, which must keep running (default: registry.k8s.io/pause of the control plane's minor)")
	f.StringArrayVar(&tolerations, "tolerations", nil, "taints probe pods tolerate besides the control plane's, as KEY[=VALUE][:EFFECT] or * (repeatable)")
	f.StringArrayVar(&schedulerNames, "scheduler-name", nil, "also send the placement probes through this scheduler (repeatable); one that binds a pod to a node lacking its feature holds scheduler-ignores-declarations")
	f.StringVarP(&output, "output", "o", "text", "text, json, yaml (both follow verdict/probe.schema.json), markdown or junit")
	f.StringVar(&svg, "svg", "", "also write an SVG chart of per-pool scheduling latency and refusals to this file")
	f.StringVar(&junit, "junit", "", "also write the verdict as JUnit (one test case per pool and stop condition) to this file")
	f.StringVar(&jsonFile, "json", "", "also write the verdict as JSON (verdict/probe.schema.json) to this file: text for people and JSON for the pipeline from one run")
	f.StringVar(&resultsCM, "results-configmap", "", "also save report.json and junit.xml in this ConfigMap of the -n namespace (or $POD_NAMESPACE): how the in-cluster Job (config/job/) hands its results to a pipeline")
	f.BoolVar(&holdUnchecked, "hold-unchecked", false, "HOLD (check-not-made) instead of INCOMPLETE when a check that applies could not be made")
	f.BoolVar(&acceptPartial, "accept-partial", false, "gate on the run's scope alone: nodes outside --node-selector and kubelets outside --kubelet-sample are listed as accepted, not unchecked (the verdict says so)")
	f.StringVar(&schedulerURL, "scheduler-metrics-url", "", "kube-scheduler /metrics URL, to include its gates (e.g. https://127.0.0.1:10259/metrics)")
	f.StringVar(&intentFile, "intent", "", "the fleet's plan, a topology name or file: every node's pool, count, kubelet version, gates and declarations are held to it (HOLD intent-mismatch)")
	f.StringVar(&intentCPVersion, "intent-control-plane-version", "", "replace the intent's control-plane version (as KUBERNETES_VERSION does for a topology)")
	f.DurationVar(&t.Freshness, "freshness", t.Freshness, "a node whose lease is older is stale")
	f.Float64Var(&t.MaxMissingRate, "max-missing-rate", t.MaxMissingRate, "fraction of a pool's nodes that may miss declarations")
	f.Float64Var(&t.MaxLatencyRatio, "max-latency-ratio", t.MaxLatencyRatio, "probe/control scheduling decision time ratio that holds")
	f.DurationVar(&t.MinLatency, "min-latency", t.MinLatency, "decision times under this never hold on ratio")
	return cmd
}

// saveResults writes the report and JUnit into a ConfigMap (created, or
// replaced when a previous run left one).
func saveResults(ctx context.Context, cfg *rest.Config, ns, name string, g verdict.Verdict) error {
	var js, junit bytes.Buffer
	if err := g.WriteJSON(&js); err != nil {
		return err
	}
	if err := g.WriteJUnit(&junit); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/managed-by": "ndfq"}},
		Data: map[string]string{"report.json": js.String(), "junit.xml": junit.String(), "verdict": string(g.Outcome)}}
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("--results-configmap %s/%s: %w", ns, name, err)
	}
	return nil
}

// peakRSS is this process's peak resident memory in bytes: VmHWM of
// /proc/self/status, which exec starts afresh (getrusage's maxrss keeps
// the parent's peak when the process was forked from a large one), or 0.
func peakRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// writeGate prints the verdict in one of the --output forms.
func writeGate(w io.Writer, g verdict.Verdict, form string) error {
	switch form {
	case "json":
		return g.WriteJSON(w)
	case "yaml":
		return g.WriteYAML(w)
	case "markdown":
		return g.WriteMarkdown(w)
	case "junit":
		return g.WriteJUnit(w)
	case "svg":
		return g.WriteSVG(w)
	}
	return g.WriteText(w)
}

func writeGateFile(path string, g verdict.Verdict, form string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeGate(f, g, form); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// intentOf is a topology as the plan the probe holds a fleet to: its
// pools, and its control plane (every apiserver's version and gates, the
// scheduler's gates, the extra schedulers).
func intentOf(t *topology.Topology) *verdict.Intent {
	cp := &verdict.IntentControlPlane{Version: t.ControlPlaneVersion().String(), APIServer: t.APIServer(), Scheduler: t.Scheduler()}
	for _, s := range t.ControlPlane.ExtraSchedulers {
		cp.ExtraSchedulers = append(cp.ExtraSchedulers, verdict.IntentScheduler{Name: s.Name, IgnoresDeclarations: s.IgnoresDeclarations})
	}
	out := &verdict.Intent{Pools: map[string]verdict.IntentPool{}, ControlPlane: cp}
	for _, p := range t.Pools() {
		out.Pools[p.Name] = verdict.IntentPool{Count: p.Count, Kubelet: p.Intent()}
	}
	return out
}
