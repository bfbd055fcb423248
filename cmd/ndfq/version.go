package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/internal/buildinfo"
)

func versionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print ndfq's version, commit, Go version and the Kubernetes minors its oracle knows",
		Example: `  ndfq version
  ndfq version -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			i := buildinfo.Get()
			switch output {
			case "", "text":
				fmt.Fprintf(cmd.OutOrStdout(), "ndfq %s (commit %s, %s, %s; oracle for Kubernetes %s)\n",
					i.Version, i.Commit, i.GoVersion, i.Platform, strings.Join(i.KubernetesMinors, ", "))
				return nil
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(i)
			}
			return fmt.Errorf("--output %q: want text or json", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}
