package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/clusters/kindconfig"
	"github.com/ndfq/ndfq/clusters/lifecycle"
	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/internal/progress"
)

func clusterCommand() *cobra.Command {
	var topo, artifacts, cacheDir, k8sVersion, name string
	var useExisting bool
	up := &cobra.Command{
		Use:   "up",
		Short: "Build the node images a topology needs (cached) and create its kind cluster",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := topology.LoadWith(topo, k8sVersion)
			if err != nil {
				return err
			}
			c, err := lifecycle.BuildAndUp(cmd.Context(), cacheDir, lifecycle.UpInput{
				Topology: t, Artifacts: artifacts, UseExisting: useExisting, Log: progress.New(cmd.ErrOrStderr()),
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster %s is up; export KUBECONFIG=%s\n", c.Name, c.Kubeconfig)
			return nil
		},
	}
	down := &cobra.Command{
		Use:   "down",
		Short: "Delete a topology's kind cluster (or, with --name, any of ndfq's clusters)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// --name needs no valid topology: a cluster whose file has since
			// changed or broken must still come down.
			if name == "" {
				t, err := topology.LoadWith(topo, k8sVersion)
				if err != nil {
					return fmt.Errorf("%w (to delete a cluster by name: ndfq cluster down --name NAME; ndfq cluster list shows them)", err)
				}
				name = kindconfig.ClusterName(t)
			}
			c := &lifecycle.Cluster{Name: name, Kubeconfig: lifecycle.KubeconfigPath(artifacts, name), Provider: lifecycle.NewProvider()}
			return c.Down(progress.New(cmd.ErrOrStderr()))
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List ndfq's kind clusters",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			names, err := lifecycle.NewProvider().List()
			if err != nil {
				return err
			}
			for _, n := range names {
				if strings.HasPrefix(n, "ndfq-") {
					fmt.Fprintln(cmd.OutOrStdout(), n)
				}
			}
			return nil
		},
	}
	for _, c := range []*cobra.Command{up, down} {
		c.Flags().StringVar(&topo, "topology", topology.DefaultName, "shipped topology name ("+strings.Join(topology.Names(), ", ")+") or file")
		c.Flags().StringVar(&k8sVersion, "kubernetes-version", os.Getenv("KUBERNETES_VERSION"), "replace the topology's control-plane version, e.g. 1.38.0-beta.0 ($KUBERNETES_VERSION)")
		c.Flags().StringVar(&artifacts, "artifacts", "_artifacts", "folder for the kubeconfig, kind config and logs")
	}
	up.Flags().StringVar(&cacheDir, "cache", nodeimage.DefaultCacheDir(), "build cache folder ($NDFQ_CACHE)")
	up.Flags().BoolVar(&useExisting, "use-existing", false, "adopt a running cluster after checking it matches the topology")
	down.Flags().StringVar(&name, "name", "", "kind cluster to delete (see ndfq cluster list); the topology is not read then")
	return group("cluster", "Bring topologies up and down without running the suites", up, down, list)
}
