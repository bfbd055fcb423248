package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set by the Makefile from git describe.
var version = "dev"

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ndfq's version",
		Args:  noArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			goVersion := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				goVersion = bi.GoVersion
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ndfq %s (%s)\n", version, goVersion)
		},
	}
}
