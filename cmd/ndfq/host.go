package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/clusters/dockerhost"
	"github.com/ndfq/ndfq/clusters/nodeimage"
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
	return group("host", "Prepare this machine to run kind clusters, and measure what a run costs it", setup, measureCommand())
}

func measureCommand() *cobra.Command {
	var jsonFile, cacheDir string
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "measure [flags] -- COMMAND [ARG...]",
		Short: "Run a command and report the peak memory and disk it took on this host (the hosted-runner budget); exit with the command's code",
		Long: `measure samples memory in use (MemTotal - MemAvailable: every process and kind
node container) and disk in use on each file system holding Docker's data, ndfq's cache
and the Go build and module caches, every --interval while COMMAND runs, then sizes
those folders. It prints one "budget:" line to stderr and, with --json, writes the
figures (docs/performance.md holds a hosted runner's 16 GB and ~14 GB to them).`,
		Example: `  ndfq host measure --json _artifacts/budget.json -- make e2e`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return fmt.Errorf("COMMAND: put it after --, e.g. ndfq host measure -- make e2e")
			}
			if interval < 100*time.Millisecond {
				return fmt.Errorf("--interval %s: want at least 100ms", interval)
			}
			goCache, goModCache := goEnv(cmd.Context(), "GOCACHE"), goEnv(cmd.Context(), "GOMODCACHE")
			folders := dockerhost.MeasuredFolders(dockerRoot(cmd.Context()), cacheDir, goCache, goModCache)
			s, err := dockerhost.StartSampler(strings.Join(args, " "), folders, interval)
			if err != nil {
				return err
			}
			run := exec.CommandContext(cmd.Context(), args[0], args[1:]...)
			run.Stdin, run.Stdout, run.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			// An interrupt stops the command as a terminal's would, then waits.
			run.Cancel = func() error { return run.Process.Signal(syscall.SIGTERM) }
			run.WaitDelay = 2 * time.Minute
			runErr := run.Run()
			sizeCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			b := s.Stop(sizeCtx)
			fmt.Fprintf(cmd.ErrOrStderr(), "budget: %s (%s)\n", b.Summary(), b.Took.Round(time.Second))
			if jsonFile != "" {
				data, err := json.MarshalIndent(b, "", "  ")
				if err == nil {
					err = os.WriteFile(jsonFile, append(data, '\n'), 0o644)
				}
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "budget: --json %s: %v\n", jsonFile, err)
				}
			}
			var exit *exec.ExitError
			if errors.As(runErr, &exit) {
				return exitCode(exit.ExitCode())
			}
			return runErr
		},
	}
	cmd.Flags().StringVar(&jsonFile, "json", "", "also write the figures as JSON to this file")
	cmd.Flags().StringVar(&cacheDir, "cache", nodeimage.DefaultCacheDir(), "ndfq's build cache folder to measure ($NDFQ_CACHE)")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "time between samples")
	return cmd
}

// goEnv is one `go env` value, "" without a go command.
func goEnv(ctx context.Context, name string) string {
	out, err := exec.CommandContext(ctx, "go", "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// dockerRoot is the engine's data folder (/var/lib/docker by default).
func dockerRoot(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.DockerRootDir}}").Output()
	if root := strings.TrimSpace(string(out)); err == nil && root != "" {
		return root
	}
	return "/var/lib/docker"
}
