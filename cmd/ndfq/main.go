// Command ndfq qualifies Node Declared Features (KEP-5328) on real,
// mixed-version clusters: it builds offline kind node images, brings up
// topologies, and probes clusters for a GO / HOLD verdict.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/internal/wait"
)

// Exit codes: 0 success or GO, 1 HOLD (said on stdout), 2 an error or bad
// usage (said on stderr), 3 INCOMPLETE: nothing failed, but not every
// claim was asked (said on stdout).
const (
	exitOK         = 0
	exitVerdict    = 1
	exitError      = 2
	exitIncomplete = 3
	// exitInterrupted is a second interrupt's: the shell's 128+SIGINT.
	exitInterrupted = 130
)

func main() {
	if filepath.Base(os.Args[0]) == "kubectl-ndfq" {
		displayName = "kubectl ndfq" // run as a kubectl plugin: `kubectl ndfq probe`
	}
	ctx := interruptible(os.Stderr)
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// interruptible is a context that the first Ctrl-C or SIGTERM cancels, so
// the command stops and cleans up; a second one exits at once.
func interruptible(stderr io.Writer) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := signalName(<-sigs)
		fmt.Fprintf(stderr, "%s: %s: stopping and cleaning up (again to exit at once)\n", displayName, sig)
		cancel(errInterrupted(sig))
		sig = signalName(<-sigs)
		fmt.Fprintf(stderr, "%s: %s again: exiting without cleaning up\n", displayName, sig)
		os.Exit(exitInterrupted)
	}()
	return ctx
}

// displayName is how help and errors name the command.
var displayName = "ndfq"

// run is the whole command line, so tests can check exit codes.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := group("ndfq", "Node Declared Features qualification harness",
		hostCommand(), imagesCommand(), clusterCommand(), topologyCommand(), oracleCommand(), intentCommand(), probeCommand(), exporterCommand(), reportCommand(), versionCommand())
	root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: displayName}
	root.SilenceUsage, root.SilenceErrors = true, true
	// Every NDFQ_INTERVAL_* override is checked before anything starts.
	// `version` waits for nothing: it answers whatever the environment says.
	var allowUnlisted bool
	root.PersistentFlags().BoolVar(&allowUnlisted, "allow-unlisted", topology.AllowUnlisted(), "accept a Kubernetes release fixtures do not list once the module proxy serves it ($NDFQ_ALLOW_UNLISTED=true)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if allowUnlisted {
			// Topologies are loaded by this process and by those it starts.
			if err := os.Setenv("NDFQ_ALLOW_UNLISTED", "true"); err != nil {
				return err
			}
		}
		if cmd.Name() == "version" {
			return nil
		}
		return wait.CheckOverrides()
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errSilentFailure):
		return exitVerdict
	case errors.Is(err, errIncomplete):
		return exitIncomplete
	}
	var passed exitCode
	if errors.As(err, &passed) {
		return int(passed)
	}
	// A run cut short says what cut it (an interrupt, --timeout) first.
	if cause := context.Cause(ctx); cause != nil && !strings.Contains(err.Error(), cause.Error()) {
		err = fmt.Errorf("%w: %w", cause, err)
	}
	fmt.Fprintln(stderr, displayName+":", err)
	return exitError
}

// errSilentFailure exits 1 after the command already said why.
var errSilentFailure = errors.New("failed")

// errIncomplete exits 3 after the command said what was not asked.
var errIncomplete = errors.New("incomplete")

// exitCode is a command's own exit code, passed on (host measure).
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

// group is a command that only holds subcommands: alone it prints its
// help; anything else it is given is refused with a suggestion.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use: use, Short: short,
		Args:                       cobra.ArbitraryArgs,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return unknownCommand(cmd, args[0])
		},
	}
	cmd.AddCommand(subs...)
	return cmd
}

func unknownCommand(cmd *cobra.Command, arg string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	hint := ""
	if s := cmd.SuggestionsFor(arg); len(s) > 0 {
		hint = fmt.Sprintf("; did you mean %q?", s[0])
	}
	return fmt.Errorf("unknown command %q for %q (it has %s)%s", arg, cmd.CommandPath(), strings.Join(names, ", "), hint)
}

// noArgs refuses stray arguments, naming them and the command's help.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		return unknownCommand(cmd, args[0])
	}
	return fmt.Errorf("%s takes no arguments, got %q (see %s --help)", cmd.CommandPath(), strings.Join(args, " "), cmd.CommandPath())
}

// signalName is a signal as shells name it.
func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// errInterrupted is the cause a signal gives the command's context.
func errInterrupted(signal string) error { return fmt.Errorf("interrupted by %s", signal) }
