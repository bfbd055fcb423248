package main

import (
	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/clusters/dockerhost"
	"github.com/ndfq/ndfq/internal/progress"
)

func hostCommand() *cobra.Command {
	var o dockerhost.Options
	setup := &cobra.Command{
		Use:   "setup",
		Short: "Install and start a Docker engine if none answers, and register the runc wrapper where the capability bounding set is short",
		Long: `setup changes this machine only where it must: apt-get installs debootstrap and
(on Debian, when no engine answers) docker.io; dockerd is started; where the capability
bounding set is short, ndfq-runc is registered in /etc/docker/daemon.json, which restarts
dockerd (and every container it runs) once.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Log = progress.New(cmd.ErrOrStderr())
			return dockerhost.Ensure(cmd.Context(), o)
		},
	}
	setup.Flags().StringVar(&o.ShimSource, "runtime-wrapper", "", "built ndfq-runc binary (default: beside ndfq)")
	setup.Flags().StringVar(&o.DaemonJSON, "daemon-json", "", "dockerd configuration file (default /etc/docker/daemon.json)")
	return group("host", "Prepare this machine to run kind clusters", setup)
}
