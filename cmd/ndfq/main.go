// Command ndfq qualifies Node Declared Features (KEP-5328) on real,
// mixed-version clusters: it builds offline kind node images, brings up
// topologies, and probes clusters for a GO / HOLD verdict.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := &cobra.Command{
		Use:           "ndfq",
		Short:         "Node Declared Features qualification harness",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(hostCommand(), imagesCommand(), clusterCommand(), probeCommand(), reportCommand(), versionCommand())
	if err := root.ExecuteContext(ctx); err != nil {
		if errors.Is(err, errSilentFailure) {
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "ndfq:", err)
		os.Exit(2)
	}
}

// errSilentFailure exits 1 after the command already said why.
var errSilentFailure = errors.New("failed")
