package verdict

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// WriteText is the terminal form.
func (v Verdict) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s  (server %s, probed in %.0fs with %d API requests)\nscope: %s\n%s\n\n", v.Outcome, v.Server, v.TookSeconds, v.APIRequests, v.Scope, v.how())
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tKUBELET\tNODES\tREAD\tNDF GATE\tDIGEST\tMISSING\tSTALE\tREFUSALS\tREJECTIONS\tPROBE P50/P99\tCONTROL P50")
	for _, p := range v.Pools {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%.0f%%\t%d\t%d\t%d\t%s/%s\t%s\n", p.Pool, strings.Join(p.Kubelets, ","), p.Nodes, p.KubeletsRead, p.KubeletGate,
			strings.Join(p.Digests, ","), p.MissingPct, len(p.StaleNodes), p.Refusals, p.Rejections, fmtSeconds(p.ProbeP50), fmtSeconds(p.ProbeP99), fmtSeconds(p.ControlP50))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ngate fingerprint: kube-apiserver %s", v.Fingerprint["kube-apiserver"])
	if s, ok := v.Fingerprint["kube-scheduler"]; ok {
		fmt.Fprintf(w, ", kube-scheduler %s", s)
	}
	fmt.Fprintln(w)
	if len(v.OracleHeldTo) > 0 {
		fmt.Fprintf(w, "oracle held to: %s\n", strings.Join(v.OracleHeldTo, ", "))
	}
	if v.Signals != "" {
		fmt.Fprintf(w, "signals: %s\n", v.Signals)
	}
	if v.Runtimes != "" {
		fmt.Fprintf(w, "runtime features: %s\n", v.Runtimes)
	}
	if v.NodeWrites != "" {
		fmt.Fprintf(w, "node writes: %s\n", v.NodeWrites)
	}
	if v.SyntheticNode != "" {
		fmt.Fprintf(w, "synthetic node: %s\n", v.SyntheticNode)
	}
	for _, r := range v.Reasons {
		fmt.Fprintf(w, "HOLD: %s\n", r)
	}
	for _, u := range v.Unchecked {
		fmt.Fprintf(w, "NOT CHECKED: %s\n", u)
	}
	for _, u := range v.Accepted {
		fmt.Fprintf(w, "ACCEPTED (--accept-partial): %s\n", u)
	}
	for _, u := range v.NotApplicable {
		fmt.Fprintf(w, "NOT APPLICABLE: %s\n", u)
	}
	return nil
}

// how says what pools are and what the probe pods ran, for the reader.
func (v Verdict) how() string {
	pools := "pools by kubelet version (no node carries a well-known pool label)"
	switch v.PoolLabel.Source {
	case "flag":
		pools = "pools by --pool-label " + v.PoolLabel.Label + " and kubelet version"
	case "well-known":
		pools = "pools by " + v.PoolLabel.Label + " (the first well-known pool label present) and kubelet version"
	}
	s := fmt.Sprintf("%s; probe pods %s in namespace %s", pools, v.Image, v.Namespace)
	if len(v.Schedulers) > 0 {
		s += "; placement also through " + strings.Join(v.Schedulers, ", ")
	}
	return s
}

// WriteMarkdown is the form for tickets and CI summaries.
func (v Verdict) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "# ndfq probe: %s\n\nServer %s, probed in %.0fs. Scope: %s. %s.\n\n", v.Outcome, v.Server, v.TookSeconds, v.Scope, v.how())
	if len(v.Reasons) > 0 {
		fmt.Fprintf(w, "## Why HOLD\n\n")
		for _, r := range v.Reasons {
			fmt.Fprintf(w, "- %s\n", r)
		}
		fmt.Fprintln(w)
	}
	for _, list := range []struct {
		title string
		items []Unchecked
	}{{"Not checked", v.Unchecked}, {"Accepted (--accept-partial)", v.Accepted}, {"Not applicable", v.NotApplicable}} {
		if len(list.items) == 0 {
			continue
		}
		fmt.Fprintf(w, "## %s\n\n", list.title)
		for _, u := range list.items {
			fmt.Fprintf(w, "- %s\n", u)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| pool | kubelet | nodes | kubelets read | NDF gate | digest | missing | stale | refusals | rejections | probe p50/p99 | control p50 |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range v.Pools {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %s | `%s` | %.0f%% | %d | %d | %d | %s/%s | %s |\n", p.Pool, strings.Join(p.Kubelets, ","), p.Nodes, p.KubeletsRead, p.KubeletGate,
			strings.Join(p.Digests, ","), p.MissingPct, len(p.StaleNodes), p.Refusals, p.Rejections, fmtSeconds(p.ProbeP50), fmtSeconds(p.ProbeP99), fmtSeconds(p.ControlP50))
	}
	return nil
}

// WriteJSON is the machine form.
func (v Verdict) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteYAML is the JSON form as YAML (the same fields and schema).
func (v Verdict) WriteYAML(w io.Writer) error {
	doc, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out, err := yaml.JSONToYAML(doc)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// WriteMarkdownTable is every stop condition and unchecked item with what
// it means and what to do: docs/rollout.md carries it.
func WriteMarkdownTable(w io.Writer) {
	fmt.Fprintf(w, "| stop condition (HOLD) | what it means | what to do |\n|---|---|---|\n")
	for _, c := range Conditions {
		a := ConditionAbout[c]
		fmt.Fprintf(w, "| `%s` | %s | %s |\n", c, a.Means, a.Do)
	}
	fmt.Fprintf(w, "\n| not checked (INCOMPLETE) | what it means | what to do |\n|---|---|---|\n")
	for _, it := range Items {
		fmt.Fprintf(w, "| `%s` | %s | %s |\n", it.Name, it.Means, it.Do)
	}
}
