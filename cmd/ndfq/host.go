package main

import (
	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/clusters/dockerhost"
	"github.com/ndfq/ndfq/internal/progress"
)

func hostCommand() *cobra.Command {
	host := &cobra.Command{Use: "host", Short: "Prepare this machine to run kind clusters"}
	var o dockerhost.Options
	setup := &cobra.Command{
		Use:   "setup",
		Short: "Install and start a Docker engine if none answers, and register the runc wrapper where the capability bounding set is short",
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Log = progress.New(cmd.ErrOrStderr())
			return dockerhost.Ensure(cmd.Context(), o)
		},
	}
	setup.Flags().StringVar(&o.ShimSource, "runtime-wrapper", "", "built ndfq-runc binary (default: beside ndfq)")
	setup.Flags().StringVar(&o.DaemonJSON, "daemon-json", "", "dockerd configuration file (default /etc/docker/daemon.json)")
	host.AddCommand(setup)
	return host
}
