package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/internal/progress"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report/rollout"
)

func probeCommand() *cobra.Command {
	var kubeconfig, kubeContext, poolLabel, namespace, output, schedulerURL, as, svg, intentFile, intentCPVersion string
	var intent rollout.Intent
	t := rollout.DefaultThresholds
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Probe any cluster's Node Declared Features and print GO (exit 0), HOLD with reasons (exit 1), or INCOMPLETE naming the checks it could not make (exit 3); errors exit 2",
		Long: `probe reads every node's declaredFeatures and its kubelet's gates, the apiserver's
(and optionally the scheduler's) gates, then places probe pods and sends probe updates
per pool in a namespace it creates and removes. It never writes to Node objects.`,
		Args: noArgs,
		// Flags are checked before anything connects to the cluster.
		PreRunE: func(*cobra.Command, []string) error {
			switch output {
			case "text", "json", "yaml", "markdown":
			default:
				return fmt.Errorf("--output %q: want text, json, yaml or markdown", output)
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
			}
			if intentFile != "" {
				plan, err := topology.LoadWith(intentFile, intentCPVersion)
				if err != nil {
					return fmt.Errorf("--intent: %w", err)
				}
				intent = intentOf(plan)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			rules.ExplicitPath = kubeconfig
			loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext, AuthInfo: clientcmdapi.AuthInfo{Impersonate: as}})
			cfg, err := loader.ClientConfig()
			if err != nil {
				return fmt.Errorf("kubeconfig: %w", err)
			}
			contextName := kubeContext
			if raw, err := loader.RawConfig(); err == nil && contextName == "" {
				contextName = raw.CurrentContext
			}
			cfg.Timeout = 30 * time.Second
			log := progress.New(cmd.ErrOrStderr())
			run, err := probes.Probe(cmd.Context(), probes.RunInput{
				Config: cfg, PoolLabel: poolLabel, NamespacePrefix: namespace, SchedulerURL: schedulerURL, Freshness: t.Freshness, Progress: log.Printf,
			})
			if err != nil {
				var perm *probes.PermissionError
				if errors.As(err, &perm) {
					return perm
				}
				return err
			}
			gate := rollout.Evaluate(run, t)
			if intent != nil {
				gate.CheckIntent(run, intent)
			}
			out := cmd.OutOrStdout()
			gate.NDFQVersion, gate.Context = version, contextName
			switch output {
			case "json":
				err = gate.WriteJSON(out)
			case "yaml":
				err = gate.WriteYAML(out)
			case "markdown":
				err = gate.WriteMarkdown(out)
			default:
				err = gate.WriteText(out)
			}
			if err != nil {
				return err
			}
			if svg != "" {
				f, err := os.Create(svg)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := gate.WriteSVG(f); err != nil {
					return err
				}
			}
			switch gate.Verdict {
			case rollout.HOLD:
				return errSilentFailure
			case rollout.INCOMPLETE:
				return errIncomplete
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&kubeContext, "context", "", "kubeconfig context")
	f.StringVar(&as, "as", "", "user to impersonate (check that config/rbac/probe.yaml is enough)")
	f.StringVar(&poolLabel, "pool-label", topology.PoolLabel, "node label that names pools")
	f.StringVar(&namespace, "namespace", "ndfq-probe", "prefix of the namespace the probe creates and removes")
	f.StringVarP(&output, "output", "o", "text", "text, json, yaml (both follow report/rollout/probe.schema.json) or markdown")
	f.StringVar(&svg, "svg", "", "also write an SVG chart of per-pool scheduling latency and refusals to this file")
	f.StringVar(&schedulerURL, "scheduler-metrics-url", "", "kube-scheduler /metrics URL, to include its gates (e.g. https://127.0.0.1:10259/metrics)")
	f.StringVar(&intentFile, "intent", "", "the fleet's plan, a topology name or file: every node's pool, count, kubelet version, gates and declarations are held to it (HOLD intent-mismatch)")
	f.StringVar(&intentCPVersion, "intent-control-plane-version", "", "replace the intent's control-plane version (as KUBERNETES_VERSION does for a topology)")
	f.DurationVar(&t.Freshness, "freshness", t.Freshness, "a node whose lease is older is stale")
	f.Float64Var(&t.MaxMissingRate, "max-missing-rate", t.MaxMissingRate, "fraction of a pool's nodes that may miss declarations")
	f.Float64Var(&t.MaxLatencyRatio, "max-latency-ratio", t.MaxLatencyRatio, "probe/control scheduling decision time ratio that holds")
	f.DurationVar(&t.MinLatency, "min-latency", t.MinLatency, "decision times under this never hold on ratio")
	return cmd
}

// intentOf is a topology as the plan the probe holds a fleet to.
func intentOf(t *topology.Topology) rollout.Intent {
	out := rollout.Intent{}
	for _, p := range t.Pools() {
		out[p.Name] = rollout.IntentPool{Count: p.Count, Kubelet: p.Intent()}
	}
	return out
}
