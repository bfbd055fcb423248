package main

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/probes/exporter"
)

// exporterCommand serves the fleet's declarations as Prometheus series
// (config/exporter/ runs it in the cluster).
func exporterCommand() *cobra.Command {
	var kube kubeFlags
	o := exporter.Options{}
	cmd := &cobra.Command{
		Use:   "exporter",
		Short: "Serve /metrics: nodes declaring each feature, missing reports, lease freshness and each pool's feature-set digest per pool and kubelet minor, and gate fingerprints (never a node name)",
		Args:  noArgs,
		PreRunE: func(*cobra.Command, []string) error {
			if _, _, err := net.SplitHostPort(o.Listen); err != nil {
				return fmt.Errorf("--listen %q: %w", o.Listen, err)
			}
			if o.PoolLabel != "" {
				if errs := validation.IsQualifiedName(o.PoolLabel); len(errs) > 0 {
					return fmt.Errorf("--pool-label %q: %s", o.PoolLabel, strings.Join(errs, "; "))
				}
			}
			if o.GateEvery < 0 || (o.GateEvery > 0 && o.GateEvery < 10*time.Second) {
				return fmt.Errorf("--gate-interval %s: want 0 (no gate fingerprints) or at least 10s", o.GateEvery)
			}
			if o.Resync < 0 {
				return fmt.Errorf("--resync %s: want 0 or more", o.Resync)
			}
			return kube.check()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := kube.config()
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			return exporter.Serve(cmd.Context(), cs, cfg, o, func(addr string) {
				fmt.Fprintf(cmd.ErrOrStderr(), "ndfq exporter: caches synced; serving /metrics on %s\n", addr)
			})
		},
	}
	kube.bind(cmd.Flags(), "unused: the exporter reads nodes and node leases cluster-wide")
	cmd.Flags().StringVar(&o.Listen, "listen", ":9810", "address to serve /metrics and /healthz on")
	cmd.Flags().StringVar(&o.PoolLabel, "pool-label", "", "node label naming each node's pool (default: the first well-known pool label any node carries)")
	cmd.Flags().DurationVar(&o.GateEvery, "gate-interval", 5*time.Minute, "how often to read gate fingerprints from the apiserver and one kubelet per pool and minor (0: never)")
	cmd.Flags().DurationVar(&o.Resync, "resync", 0, "informer resync period (0: none; watches keep the caches current)")
	return cmd
}
