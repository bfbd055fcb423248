package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
)

func oracleCommand() *cobra.Command {
	var cacheDir string
	check := &cobra.Command{
		Use:   "check RELEASE...",
		Short: "Hold ndfq's tables (gates, registry, messages, admission plugins, signals) to each release's own sources; exit 0 when every release agrees, 1 naming each difference",
		Long: `Hold ndfq's tables to each release's own sources, as make verify does for
the releases they were written from: the gate table from its
kube_features.go, its component-helpers registry run over random node
configurations, the scheduler's, validator's and kubelet's messages, its
admission plugins, kubeadm's pause image and the signals the rules read.
The first check of a release downloads its sources through the module
proxy and needs the go command; the answer is kept per release and per
oracle under --cache, where topology validation and the probe read it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var releases []kubeversion.Version
			for i, a := range args {
				v, err := kubeversion.Parse(a)
				if err == nil {
					err = fixtures.KnownMinor(v.Minor())
				}
				if err != nil {
					return fmt.Errorf("RELEASE %d: %w", i+1, err)
				}
				releases = append(releases, v)
			}
			out, differ := cmd.OutOrStdout(), 0
			for _, v := range releases {
				if _, cached := fixtures.CachedReleaseCheck(cacheDir, v); !cached {
					fmt.Fprintf(cmd.ErrOrStderr(), "checking %s against its own sources (downloads them once)...\n", v)
				}
				c, err := fixtures.CheckReleaseCached(cmd.Context(), cacheDir, v)
				if err != nil {
					return err
				}
				source := ""
				if fixtures.IsSource(v) {
					source = " (the release the tables were written from)"
				}
				if c.Equal() {
					fmt.Fprintf(out, "%s%s: equal to ndfq's %s tables\n", v, source, v.Minor())
					continue
				}
				differ++
				fmt.Fprintf(out, "%s%s: %d difference(s) from ndfq's %s tables (written from %s):\n", v, source, len(c.Differences), v.Minor(), fixtures.Sources[v.Minor()])
				for _, d := range c.Differences {
					fmt.Fprintf(out, "  - %s\n", d)
				}
			}
			if differ > 0 {
				fmt.Fprintf(out, "%d of %d release(s) differ: a run with them is refused\n", differ, len(releases))
				return errSilentFailure
			}
			return nil
		},
	}
	check.Flags().StringVar(&cacheDir, "cache", nodeimage.DefaultCacheDir(), "where checks are kept ($NDFQ_CACHE)")
	return group("oracle", "What ndfq expects of each Kubernetes release, held to that release's sources", check)
}
