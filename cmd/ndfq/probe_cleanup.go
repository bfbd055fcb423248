package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ndfq/ndfq/internal/progress"
	"github.com/ndfq/ndfq/probes"
)

// probeCleanupCommand removes what earlier probe runs left behind.
func probeCleanupCommand() *cobra.Command {
	var kube kubeFlags
	var runID string
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove what earlier probe runs left (a run killed with SIGKILL, a lost connection): every synthetic node and namespace a run made and every probe pod, by the ndfq.io/probe-run label",
		Args:  noArgs,
		PreRunE: func(*cobra.Command, []string) error {
			if runID != "" {
				if errs := validation.IsValidLabelValue(runID); len(errs) > 0 {
					return fmt.Errorf("--run %q: %s", runID, strings.Join(errs, "; "))
				}
			}
			return kube.check()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs, err := kube.clientset()
			if err != nil {
				return err
			}
			left, err := probes.Cleanup(cmd.Context(), probes.CleanupInput{Clientset: cs, Namespace: kube.namespace(), RunID: runID, Progress: progress.New(cmd.ErrOrStderr()).Printf})
			fmt.Fprintf(cmd.OutOrStdout(), "removed %d synthetic nodes %v, %d namespaces %v and %d pods %v\n", len(left.Nodes), left.Nodes, len(left.Namespaces), left.Namespaces, len(left.Pods), left.Pods)
			return err
		},
	}
	kube.bind(cmd.Flags(), "only the probe pods of this namespace, which the probe keeps (default: every namespace a run made, and probe pods anywhere)")
	cmd.Flags().StringVar(&runID, "run", "", "only this run's (its id is in the report's runID and on everything it made)")
	return cmd
}
