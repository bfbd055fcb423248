package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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

	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/buildinfo"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/internal/progress"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/verdict"
)

func probeCommand() *cobra.Command {
	var criImage string
	var poolLabel, nodeSelector, image, output, schedulerURL, svg, junit, jsonFile, resultsCM, intentFile, intentCPVersion string
	var tolerations, schedulerNames []string
	var qps float32
	var burst, kubeletSample int
	var holdUnchecked, acceptPartial, waitCleanup bool
	var baselineFile, oracleCache string
	var baseline *verdict.Baseline
	var timeout time.Duration
	var intent *verdict.Intent
	var tols []corev1.Toleration
	var kube kubeFlags
	t := verdict.DefaultThresholds
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
			case "text", "json", "yaml", "markdown", "junit", "prometheus":
			default:
				return fmt.Errorf("--output %q: want text, json, yaml, markdown, junit or prometheus", output)
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
			case timeout < 0:
				return fmt.Errorf("--timeout %s: want 0 (none) or more", timeout)
			}
			// A run is not thrown away at its end for a file it cannot write.
			for _, out := range []struct{ flag, path string }{{"--json", jsonFile}, {"--junit", junit}, {"--svg", svg}} {
				if err := writable(out.path); err != nil {
					return fmt.Errorf("%s %s: %w", out.flag, out.path, err)
				}
			}
			if baselineFile != "" {
				var err error
				if baseline, err = verdict.ReadBaseline(baselineFile); err != nil {
					return err
				}
			}
			if err := kube.check(); err != nil {
				return err
			}
			if _, err := labels.Parse(nodeSelector); err != nil {
				return fmt.Errorf("--node-selector %q: %w", nodeSelector, err)
			}
			for _, ref := range []struct{ flag, image string }{{"--image", image}, {"--cri-image", criImage}} {
				if ref.image == "" {
					continue
				}
				if _, err := name.ParseReference(ref.image); err != nil {
					return fmt.Errorf("%s %q: %w", ref.flag, ref.image, err)
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
			if resultsCM != "" {
				if errs := validation.IsDNS1123Subdomain(resultsCM); len(errs) > 0 {
					return fmt.Errorf("--results-configmap %q: %s", resultsCM, strings.Join(errs, "; "))
				}
				if kube.namespace() == "" && os.Getenv("POD_NAMESPACE") == "" {
					return fmt.Errorf("--results-configmap %q: give its namespace with -n (or POD_NAMESPACE in a pod)", resultsCM)
				}
			}
			if intentFile != "" {
				var err error
				if intent, err = loadIntent(intentFile, intentCPVersion); err != nil {
					return fmt.Errorf("--intent: %w", err)
				}
				// What the intent names is what the run probes: each extra scheduler too.
				for _, s := range intent.ExtraSchedulers() {
					if !slices.Contains(schedulerNames, s.Name) {
						schedulerNames = append(schedulerNames, s.Name)
					}
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, contextName, err := kube.config()
			if err != nil {
				return err
			}
			cfg.QPS, cfg.Burst = qps, burst
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("--timeout %s passed", timeout))
				defer cancel()
			}
			log := progress.New(cmd.ErrOrStderr())
			runID := probes.NewRunID()
			var results *resultsConfigMap
			if resultsCM != "" {
				// Written first: a run that dies never leaves an older run's verdict standing.
				results = &resultsConfigMap{cfg: cfg, ns: cmp.Or(kube.namespace(), os.Getenv("POD_NAMESPACE")), name: resultsCM, runID: runID}
				if err := results.save(ctx, map[string]string{"verdict": resultsRunning}); err != nil {
					return err
				}
				log.Printf("run %s: configmap %s/%s says %s", runID, results.ns, resultsCM, resultsRunning)
			}
			run, err := probes.Probe(ctx, probes.RunInput{
				Config: cfg, PoolLabel: poolLabel, NodeSelector: nodeSelector, Namespace: kube.namespace(), NamespacePrefix: "ndfq-probe",
				Image: image, CRIImage: criImage, Tolerations: tols, SchedulerNames: schedulerNames, RunID: runID, WaitCleanup: waitCleanup,
				SchedulerURL: schedulerURL, KubeletSample: kubeletSample, Freshness: t.Freshness, Progress: log.Printf,
			})
			if err != nil {
				if cause := context.Cause(ctx); cause != nil && !strings.Contains(err.Error(), cause.Error()) {
					err = fmt.Errorf("%w: %w", cause, err)
				}
				if results != nil {
					// The command's context may be what ended: the error is still written.
					sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resultsWriteTimeout)
					defer cancel()
					if serr := results.save(sctx, map[string]string{"verdict": resultsError, "error": err.Error()}); serr != nil {
						log.Printf("%v", serr)
					}
				}
				var perm *probes.PermissionError
				if errors.As(err, &perm) {
					return perm
				}
				return err
			}
			judged := verdict.Evaluate(run, verdict.Policy{Thresholds: t, Intent: intent, AcceptPartial: acceptPartial, HoldUnchecked: holdUnchecked, Baseline: baseline,
				ReleaseCheck: func(v kubeversion.Version) (fixtures.ReleaseCheck, bool) {
					return fixtures.CachedReleaseCheck(oracleCache, v)
				}})
			judged.NDFQVersion, judged.Context, judged.PeakRSSBytes = buildinfo.Get().Version, contextName, peakRSS()
			// Every output is attempted; a write error does not hide a HOLD or INCOMPLETE.
			var writeErrs []error
			if err := writeVerdict(cmd.OutOrStdout(), judged, output); err != nil {
				writeErrs = append(writeErrs, err)
			}
			if results != nil {
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resultsWriteTimeout)
				defer cancel()
				if err := results.saveVerdict(sctx, judged); err != nil {
					writeErrs = append(writeErrs, err)
				} else {
					log.Printf("results in configmap %s/%s (report.json, junit.xml)", results.ns, resultsCM)
				}
			}
			for _, out := range []struct{ flag, path, form string }{{"--svg", svg, "svg"}, {"--junit", junit, "junit"}, {"--json", jsonFile, "json"}} {
				if out.path == "" {
					continue
				}
				if err := writeVerdictFile(out.path, judged, out.form); err != nil {
					writeErrs = append(writeErrs, fmt.Errorf("%s %s: %w", out.flag, out.path, err))
				}
			}
			writeErr := errors.Join(writeErrs...)
			switch judged.Outcome {
			case verdict.HOLD:
				sayWriteErr(cmd, writeErr)
				return errSilentFailure
			case verdict.INCOMPLETE:
				sayWriteErr(cmd, writeErr)
				return errIncomplete
			}
			return writeErr
		},
	}
	cmd.AddCommand(probeCleanupCommand(), probeReadCRICommand())
	f := cmd.Flags()
	kube.bind(f, "an existing namespace for the probe pods: none is created, only the run's pods are deleted after (default: a new namespace, removed after)")
	f.Float32Var(&qps, "qps", 20, "client queries per second to the apiserver")
	f.IntVar(&burst, "burst", 40, "client burst of queries to the apiserver")
	f.IntVar(&kubeletSample, "kubelet-sample", 0, "ask at most this many kubelets per pool, chosen at random, for their gates (0: every one); the others' declared sets are judged only against their pool's (mixed-pool)")
	f.StringVar(&poolLabel, "pool-label", "", "node label that names pools (default: the first of "+strings.Join(probes.WellKnownPoolLabels, ", ")+" that a node carries); pools are also sliced by kubelet version")
	f.StringVarP(&nodeSelector, "node-selector", "l", "", "label selector: probe only these nodes (e.g. pool=a,zone!=b)")
	f.StringVar(&image, "image", "", "probe pods' image, run with its own entrypoint, which must keep running (default: registry.k8s.io/pause of the control plane's minor)")
	f.StringVar(&criImage, "cri-image", "", "ndfq's own image (config/job/'s): read each kubelet's runtime features over its CRI from a pod of it on the node, rather than from the runtime's version (a root pod on the CRI socket, in the run's namespace labelled privileged: strong; docs/rollout.md)")
	f.StringArrayVar(&tolerations, "tolerations", nil, "taints probe pods tolerate besides the control plane's, as KEY[=VALUE][:EFFECT] or * (repeatable)")
	f.StringArrayVar(&schedulerNames, "scheduler-name", nil, "also send the placement probes through this scheduler (repeatable); one that binds a pod to a node lacking its feature holds scheduler-ignores-declarations")
	f.StringVarP(&output, "output", "o", "text", "text, json, yaml (both follow verdict/probe.schema.json), markdown, junit, or prometheus (the verdict's figures for a textfile collector or a Pushgateway)")
	f.StringVar(&svg, "svg", "", "also write an SVG chart of per-pool scheduling latency and refusals to this file")
	f.StringVar(&junit, "junit", "", "also write the verdict as JUnit (one test case per pool and stop condition) to this file")
	f.StringVar(&jsonFile, "json", "", "also write the verdict as JSON (verdict/probe.schema.json) to this file: text for people and JSON for the pipeline from one run")
	f.StringVar(&resultsCM, "results-configmap", "", "also save report.json and junit.xml in this ConfigMap of the -n namespace (or $POD_NAMESPACE): how the in-cluster Job (config/job/) hands its results to a pipeline")
	f.StringVar(&baselineFile, "baseline", "", "an earlier report (-o json or --json) to compare with: HOLD above-baseline where a pool's missing-report rate, refusals, rejections or decision time (over 2x and 1s more) rose")
	f.StringVar(&oracleCache, "oracle-cache", nodeimage.DefaultCacheDir(), "folder where ndfq oracle check kept its checks of releases against their own sources ($NDFQ_CACHE): a release the fleet runs that is neither its minor's source nor checked there is unchecked (oracle-release)")
	f.BoolVar(&holdUnchecked, "hold-unchecked", false, "HOLD (check-not-made) instead of INCOMPLETE when a check that applies could not be made")
	f.BoolVar(&acceptPartial, "accept-partial", false, "gate on the run's scope alone: nodes outside --node-selector and kubelets outside --kubelet-sample are listed as accepted, not unchecked (the verdict says so)")
	f.StringVar(&schedulerURL, "scheduler-metrics-url", "", "kube-scheduler /metrics URL, to include its gates (e.g. https://127.0.0.1:10259/metrics)")
	f.StringVar(&intentFile, "intent", "", "the fleet's plan, a fleet intent file (verdict/intent.schema.json; ndfq intent capture writes one) or a topology name or file: every node's pool, count, kubelet version, gates and declarations are held to it (HOLD intent-mismatch), and every scheduler it names is probed")
	f.BoolVar(&waitCleanup, "wait-cleanup", false, "wait (up to 2m) until the probe pods are gone from their nodes before exiting, as before a drain; by default their removal is asked and goes on in the cluster")
	f.DurationVar(&timeout, "timeout", 15*time.Minute, "the whole run's bound, cleanup excluded (0: none); past it the probe stops, cleans up and exits 2")
	f.StringVar(&intentCPVersion, "intent-control-plane-version", "", "replace the intent's control-plane version (as KUBERNETES_VERSION does for a topology)")
	f.DurationVar(&t.Freshness, "freshness", t.Freshness, "a node whose lease is older is stale")
	f.Float64Var(&t.MaxMissingRate, "max-missing-rate", t.MaxMissingRate, "fraction of a pool's nodes that may miss declarations")
	f.Float64Var(&t.MaxLatencyRatio, "max-latency-ratio", t.MaxLatencyRatio, "probe/control scheduling decision time ratio that holds")
	f.DurationVar(&t.MinLatency, "min-latency", t.MinLatency, "decision times under this never hold on ratio")
	return cmd
}

// The results ConfigMap's verdict while the run goes on, and after an error.
const (
	resultsRunning = "RUNNING"
	resultsError   = "ERROR"
	// resultsWriteTimeout bounds the last write after an interrupt (a
	// Job's pod has its grace period, 30 s by default, to write it).
	resultsWriteTimeout = 10 * time.Second
)

// resultsConfigMap is where the in-cluster Job hands its results to a
// pipeline: one run's, named by its run id, pod and Job, replaced whole
// at each step (RUNNING, then the verdict or the error).
type resultsConfigMap struct {
	cfg             *rest.Config
	ns, name, runID string
}

func (r *resultsConfigMap) saveVerdict(ctx context.Context, v verdict.Verdict) error {
	var js, junit bytes.Buffer
	if err := v.WriteJSON(&js); err != nil {
		return err
	}
	if err := v.WriteJUnit(&junit); err != nil {
		return err
	}
	return r.save(ctx, map[string]string{"report.json": js.String(), "junit.xml": junit.String(), "verdict": string(v.Outcome)})
}

// save replaces the ConfigMap's data with data and the run's identity.
func (r *resultsConfigMap) save(ctx context.Context, data map[string]string) error {
	data["runID"] = r.runID
	// In the Job, its pod and the Job's UID (config/job/ sets both).
	for key, env := range map[string]string{"pod": "POD_NAME", "jobUID": "JOB_UID"} {
		if v := os.Getenv(env); v != "" {
			data[key] = v
		}
	}
	cs, err := kubernetes.NewForConfig(r.cfg)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: r.ns,
		Labels: map[string]string{probes.ManagedByLabel: probes.ManagedBy, probes.RunLabel: r.runID}}, Data: data}
	_, err = cs.CoreV1().ConfigMaps(r.ns).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = cs.CoreV1().ConfigMaps(r.ns).Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("--results-configmap %s/%s: %w", r.ns, r.name, err)
	}
	return nil
}

// sayWriteErr prints an output's write error where the exit code is the verdict's.
func sayWriteErr(cmd *cobra.Command, err error) {
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v\n", displayName, err)
	}
}

// writable is whether a file can be written at path ("" is no file): its
// folder exists and takes a new file, and path is not a folder.
func writable(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return errors.New("is a directory")
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".ndfq-probe-*")
	if err != nil {
		return fmt.Errorf("cannot write there: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
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

// writeVerdict prints the verdict in one of the --output forms.
func writeVerdict(w io.Writer, v verdict.Verdict, form string) error {
	switch form {
	case "json":
		return v.WriteJSON(w)
	case "yaml":
		return v.WriteYAML(w)
	case "markdown":
		return v.WriteMarkdown(w)
	case "junit":
		return v.WriteJUnit(w)
	case "svg":
		return v.WriteSVG(w)
	case "prometheus":
		return v.WritePrometheus(w)
	}
	return v.WriteText(w)
}

func writeVerdictFile(path string, v verdict.Verdict, form string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeVerdict(f, v, form); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
