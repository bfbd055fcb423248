package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

func reportCommand() *cobra.Command {
	var junit, label, reportMD string
	var shown, logLines int
	summary := &cobra.Command{
		Use:   "summary",
		Short: "Print why a JUnit file's specs failed, then its closing count: 'LABEL: N passed, N failed, N skipped'; exit 1 when anything failed, 3 when nothing passed",
		Long: "Print why a JUnit file's specs failed, then its closing count.\n\n" +
			"For each of the first --failures specs that did not pass: its name, its failure message and the last --log-lines lines it wrote " +
			"before failing, so that the end of a CI log says what broke. The last line is always the count.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if shown < 0 || logLines < 0 {
				return fmt.Errorf("--failures and --log-lines can't be negative")
			}
			j, err := report.ReadJUnit(junit, logLines)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for i, f := range j.Failures {
				if i == shown {
					fmt.Fprintf(out, "(%d more failed: see %s)\n", len(j.Failures)-shown, junit)
					break
				}
				fmt.Fprintf(out, "FAILED %s\n", clip(f.Spec, 240))
				for _, l := range firstLines(f.Message, 8) {
					fmt.Fprintf(out, "  %s\n", clip(l, 240))
				}
				for _, l := range f.LogTail {
					fmt.Fprintf(out, "  | %s\n", clip(l, 240))
				}
			}
			// A green JUnit is not a GO: report.md also asks the claim
			// matrix (a cell not observed, one not covered).
			var outcome verdict.Outcome
			if reportMD != "" {
				var reasons []string
				if outcome, reasons, err = report.ReadVerdict(reportMD); err != nil {
					return err
				}
				if outcome != verdict.GO {
					fmt.Fprintf(out, "report.md says %s:\n", outcome)
					for i, r := range reasons {
						if i == shown {
							fmt.Fprintf(out, "  (%d more: see %s)\n", len(reasons)-shown, reportMD)
							break
						}
						fmt.Fprintf(out, "  %s\n", clip(r, 240))
					}
				}
			}
			fmt.Fprintf(out, "%s: %s\n", label, j.Counts)
			switch {
			case j.Failed > 0 || outcome == verdict.HOLD:
				return errSilentFailure
			case j.Passed == 0 || outcome == verdict.INCOMPLETE:
				return errIncomplete
			}
			return nil
		},
	}
	summary.Flags().StringVar(&junit, "junit", "_artifacts/junit.xml", "Ginkgo JUnit report")
	summary.Flags().StringVar(&label, "label", "e2e", "word before the count")
	summary.Flags().StringVar(&reportMD, "report", "", "the suites' report.md: a verdict that is not GO prints its reasons and fails too (1 for HOLD, 3 for INCOMPLETE)")
	summary.Flags().IntVar(&shown, "failures", 3, "failed specs to explain before the count")
	summary.Flags().IntVar(&logLines, "log-lines", 6, "lines of each failed spec's timeline before its failure")
	return group("report", "Summaries of suite results, and the claims a topology makes", summary, claimsCommand(), timingCommand())
}

// firstLines is s's first n non-empty lines, saying how many were left out.
func firstLines(s string, n int) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		return append(lines[:n], fmt.Sprintf("(%d more lines)", len(lines)-n))
	}
	return lines
}

// clip shortens s to n runes, marking the cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func timingCommand() *cobra.Command {
	var jsonReport string
	var top int
	cmd := &cobra.Command{
		Use:   "timing",
		Short: "Print where a suite's time went, from its Ginkgo JSON report: the slowest specs and the serial and parallel sums",
		Args:  noArgs,
		PreRunE: func(*cobra.Command, []string) error {
			if top < 1 {
				return fmt.Errorf("--top %d: want 1 or more", top)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := report.ReadTiming(jsonReport)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "| spec | seconds | serial |\n|---|---|---|")
			for _, s := range t.Specs[:min(top, len(t.Specs))] {
				name := s.Name
				if r := []rune(name); len(r) > 120 { // a spec's full text can run to 300 characters
					name = string(r[:120]) + "…"
				}
				fmt.Fprintf(out, "| %s | %.0f | %t |\n", name, s.Took.Seconds(), s.Serial)
			}
			fmt.Fprintf(out, "\n%d specs ran: %.0f s of serial specs, %.0f s of parallel ones; the suite took %.0f s\n",
				len(t.Specs), t.SerialSum.Seconds(), t.ParallSum.Seconds(), t.Wall.Seconds())
			return nil
		},
	}
	cmd.Flags().StringVar(&jsonReport, "json", "_artifacts/report.json", "Ginkgo --json-report file")
	cmd.Flags().IntVar(&top, "top", 15, "how many of the slowest specs to list")
	return cmd
}

func claimsCommand() *cobra.Command {
	var topo, k8sVersion, output string
	var kinds bool
	cmd := &cobra.Command{
		Use:   "claims",
		Short: "Print the claim matrix of a topology without a cluster: every (claim, pool, feature) cell, what it expects, or why it does not apply",
		Args:  noArgs,
		PreRunE: func(*cobra.Command, []string) error {
			if output != "text" && output != "markdown" && output != "json" {
				return fmt.Errorf("--output %q: want text, markdown or json", output)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if kinds {
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "KIND	OBSERVED IN	CLAIM")
				for _, r := range claims.Table {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Kind, r.Observed, r.Claim)
				}
				return tw.Flush()
			}
			t, err := topology.LoadWith(topo, k8sVersion)
			if err == nil {
				err = claims.CheckAccepted(t)
			}
			if err != nil {
				return err
			}
			cells := claims.Matrix(t)
			switch output {
			case "json":
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(cells)
			case "markdown":
				report.WriteMatrix(out, cells, func(c claims.Cell) string { return "expect " + c.Expect })
			default:
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "CLAIM\tPOOL\tKUBELET\tFEATURE\tSTATUS")
				for _, c := range cells {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Kind, c.Pool, c.Kubelet, c.Feature, c.Status())
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			applies, na, uncovered := claims.Count(cells)
			accepted := 0
			for _, c := range cells {
				if c.Uncovered != "" && c.Accepted != "" {
					accepted++
				}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "topology %s: %d cells apply, %d not applicable, %d not covered by a probe yet (%d of them accepted by the topology)\n", t.Name, applies, na, uncovered, accepted)
			if err := t.ForSuites(); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "the matrix is the first control-plane node's apiserver's; the suites do not run it: %v\n", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&topo, "topology", topology.DefaultName, "shipped topology name or file")
	cmd.Flags().StringVar(&k8sVersion, "kubernetes-version", os.Getenv("KUBERNETES_VERSION"), "replace the control-plane version ($KUBERNETES_VERSION)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text, markdown or json")
	cmd.Flags().BoolVar(&kinds, "kinds", false, "list the claim kinds (the claims table): what each claims and how the suites observe it")
	return cmd
}
