package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/report"
)

func reportCommand() *cobra.Command {
	var junit, label string
	summary := &cobra.Command{
		Use:   "summary",
		Short: "Print a JUnit file's closing count: 'LABEL: N passed, N failed, N skipped'; exit 1 when anything failed, 3 when nothing passed",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := report.CountJUnit(junit)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", label, c)
			switch {
			case c.Failed > 0:
				return errSilentFailure
			case c.Passed == 0:
				return errIncomplete
			}
			return nil
		},
	}
	summary.Flags().StringVar(&junit, "junit", "_artifacts/junit.xml", "Ginkgo JUnit report")
	summary.Flags().StringVar(&label, "label", "e2e", "word before the count")
	return group("report", "Summaries of suite results", summary)
}
