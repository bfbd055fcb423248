package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/topology"
)

func topologyCommand() *cobra.Command {
	var k8sVersion, cacheDir string
	var forSuites, oracleCheck bool
	validate := &cobra.Command{
		Use:   "validate NAME|FILE",
		Short: "Check a topology against the version skew policy, each minor's gate rules and each release's own sources; exit 0 when valid, 2 naming every problem",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := topology.LoadWith(args[0], k8sVersion)
			if err == nil {
				err = claims.CheckAccepted(t)
			}
			if err == nil && forSuites {
				err = t.ForSuites()
			}
			if err == nil && oracleCheck {
				err = t.CheckOracle(cmd.Context(), cacheDir, func(format string, args ...any) {
					fmt.Fprintf(cmd.ErrOrStderr(), format+"\n", args...)
				})
			}
			if err != nil {
				return err
			}
			cp := string(t.ControlPlaneVersion())
			if n := t.ControlPlaneCount(); n > 1 {
				cp = fmt.Sprintf("%s on %d nodes behind a load balancer", cp, n)
			}
			for _, note := range t.ControlPlaneNotes() {
				cp += "; " + note
			}
			fmt.Fprintf(cmd.OutOrStdout(), "topology %s is valid: %d nodes, control plane %s, kubelets %s\n", t.Name, t.NodeCount(), cp, t.Versions())
			return nil
		},
	}
	validate.Flags().StringVar(&k8sVersion, "kubernetes-version", os.Getenv("KUBERNETES_VERSION"), "replace the control-plane version before validating ($KUBERNETES_VERSION)")
	validate.Flags().StringVar(&cacheDir, "cache", nodeimage.DefaultCacheDir(), "where release checks are kept ($NDFQ_CACHE)")
	validate.Flags().BoolVar(&oracleCheck, "oracle-check", true, "hold every release the topology runs that is not its minor's source to its own sources (downloads it once); false leaves them unchecked, which report.md then says")
	validate.Flags().BoolVar(&forSuites, "suites", false, "also refuse a topology the suites cannot judge (apiservers that disagree from the start)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the shipped topologies",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), strings.Join(topology.Names(), "\n"))
			return nil
		},
	}
	return group("topology", "Check and list topologies without touching the host", validate, list)
}
