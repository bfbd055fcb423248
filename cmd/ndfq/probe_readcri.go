package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/probes"
)

// probeReadCRICommand is the side of `ndfq probe --cri-image` that runs in
// the reader pod on a node: one CRI Status, printed as JSON and written as
// the container's termination message, which the probe reads from the
// pod's status.
func probeReadCRICommand() *cobra.Command {
	var endpoint, terminationLog string
	cmd := &cobra.Command{
		Use:    "read-cri",
		Short:  "Print what the runtime at --endpoint reports over the CRI (the reader pod of ndfq probe --cri-image)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), probes.CRIReadTimeout)
			defer cancel()
			r, err := probes.ReadCRI(ctx, endpoint)
			if err != nil {
				return err
			}
			out, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if err := writeExisting(terminationLog, out); err != nil {
				return fmt.Errorf("--termination-log %s: %w", terminationLog, err)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(out))
			return err
		},
	}
	cmd.Flags().StringVar(&endpoint, "endpoint", "unix:///run/containerd/containerd.sock", "the runtime's CRI socket")
	cmd.Flags().StringVar(&terminationLog, "termination-log", "/dev/termination-log", "where the pod's termination message is read from")
	return cmd
}

// writeExisting writes a file the container runtime made; outside a pod
// there is none (stdout alone), and none is made.
func writeExisting(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
