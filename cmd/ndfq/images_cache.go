package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/clusters/nodeimage"
)

// githubDelimiter ends a multi-line value in $GITHUB_OUTPUT.
const githubDelimiter = "NDFQ_EOF"

// cachePlanCommand prints the CI cache entries of a topology's Kubernetes
// binaries, one per release, so a matrix job restores only the releases
// its topology runs and topologies that share a minor share its builds.
func cachePlanCommand() *cobra.Command {
	var topo, k8sVersion, cacheDir, output string
	var slots int
	cmd := &cobra.Command{
		Use:   "cache-plan",
		Short: "Print the per-release cache entries of a topology's Kubernetes binaries; -o github writes them as step outputs",
		Example: `  ndfq images cache-plan --topology skew-1.37
  ndfq images cache-plan --topology "$TOPOLOGY" -o github >> "$GITHUB_OUTPUT"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "github" {
				return fmt.Errorf("--output %q: want text or github", output)
			}
			plan, err := imagePlan([]string{topo}, k8sVersion, nil, nil)
			if err != nil {
				return err
			}
			bin := filepath.Join(cacheDir, "bin")
			w := cmd.OutOrStdout()
			entries := plan.BinsByRelease()
			if output == "text" {
				for _, e := range entries {
					fmt.Fprintf(w, "%s\t%s\t%d binaries\n", e.Release, releaseCacheKey(e), len(e.Keys))
				}
				return nil
			}
			if slots > 0 && len(entries) > slots {
				return fmt.Errorf("topology %s builds %d Kubernetes releases, more than the %d cache slots the workflow has (--slots): add a restore and a save step per slot", topo, len(entries), slots)
			}
			fmt.Fprintf(w, "releases=%d\n", len(entries))
			rest := []string{bin} // every other binary: crictl, etcd, CoreDNS, runtimes
			for i, e := range entries {
				fmt.Fprintf(w, "bin_key_%d=%s\n", i, releaseCacheKey(e))
				fmt.Fprintf(w, "bin_paths_%d<<%s\n", i, githubDelimiter)
				for _, k := range e.Keys {
					fmt.Fprintln(w, filepath.Join(bin, k))
					rest = append(rest, "!"+filepath.Join(bin, k))
				}
				fmt.Fprintln(w, githubDelimiter)
			}
			fmt.Fprintf(w, "bin_rest<<%s\n%s\n%s\n", githubDelimiter, strings.Join(rest, "\n"), githubDelimiter)
			return nil
		},
	}
	cmd.Flags().StringVar(&topo, "topology", "skew-1.37", "shipped topology name or file")
	cmd.Flags().StringVar(&k8sVersion, "kubernetes-version", os.Getenv("KUBERNETES_VERSION"), "replace the topology's control-plane version ($KUBERNETES_VERSION)")
	cmd.Flags().StringVar(&cacheDir, "cache", nodeimage.DefaultCacheDir(), "build cache folder ($NDFQ_CACHE)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or github")
	cmd.Flags().IntVar(&slots, "slots", 0, "refuse a topology of more releases than this (the workflow's per-release cache steps); 0: any")
	return cmd
}

// releaseCacheKey names a release's entry by the binaries it holds: the
// same release built with other flags or another Go is another entry.
func releaseCacheKey(e nodeimage.ReleaseBins) string {
	sum := sha256.Sum256([]byte(strings.Join(e.Keys, "\n")))
	return fmt.Sprintf("ndfq-bin-%s-%s", e.Release, hex.EncodeToString(sum[:])[:16])
}
