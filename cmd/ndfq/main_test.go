package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each row is a command line a user might type, its exit code and what
// stdout or stderr must say. None of them reaches a cluster or the host.
func TestExitCodes(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\ncontrolPlane: {version: 1.38.0-beta.0}\nworkers:\n- {name: old, count: 1, version: 1.34.4}\n- {name: odd, count: 1, version: 1.36.3, kubelet: {featureGates: {NodeDeclaredFeatures: false}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(t.TempDir(), "typo.yaml")
	if err := os.WriteFile(typo, []byte("name: typo\ncontrolPlane: {version: 1.37.2}\nworkers:\n- {name: a, count: 1, version: 1.37.2, kubelet: {featureGates: {NodeDeclaredFeaturez: true}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fleet := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(fleet, []byte("apiVersion: ndfq.io/v1alpha1\nkind: FleetIntent\npools: [{name: a, nodes: {count: 50}, kubelet: {versions: ['1.99']}}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"intent", "from-topology", "skew-1.37"}, exitOK, "kind: FleetIntent"},
		{[]string{"intent", "from-topology", "nope"}, exitError, `no topology "nope"`},
		{[]string{"intent", "validate", fleet}, exitError, "pools[0] (a).kubelet.versions[0]: ndfq has no oracle for Kubernetes 1.99"},
		{[]string{"probe", "--intent", fleet}, exitError, "--intent: " + fleet + ": pools[0] (a).kubelet.versions[0]"},
		{[]string{"probe", "--intent", fleet, "--intent-control-plane-version", "1.37.2"}, exitError, "is a fleet intent: give its controlPlane.version in the file"},
		{[]string{"version"}, exitOK, "ndfq "},
		{[]string{"version", "extra"}, exitError, `ndfq version takes no arguments, got "extra"`},
		{[]string{"cluster", "dwon"}, exitError, `unknown command "dwon" for "ndfq cluster" (it has down, list, up); did you mean "down"?`},
		{[]string{"clsuter"}, exitError, `unknown command "clsuter" for "ndfq"`},
		{[]string{"cluster"}, exitOK, "Available Commands"},
		{[]string{"images", "biuld"}, exitError, `did you mean "build"?`},
		{[]string{"cluster", "list", "stray"}, exitError, "takes no arguments"},
		{[]string{"topology", "validate", "--oracle-check=false", "skew-1.37"}, exitOK, "topology skew-1.37 is valid: 10 nodes"},
		{[]string{"topology", "validate", "ha-1.37"}, exitOK, "control plane v1.37.2 on 2 nodes behind a load balancer"},
		{[]string{"topology", "validate", "nope"}, exitError, `no topology "nope"`},
		{[]string{"topology", "validate", bad}, exitError, "workers[0] (old): kubelet v1.34.4 is 4 minors older than kube-apiserver v1.38.0-beta.0"},
		{[]string{"topology", "validate", bad}, exitError, "workers[1] (odd).kubelet.featureGates: feature gate ExtendWebSocketsToKubelet depends on NodeDeclaredFeatures"},
		{[]string{"topology", "validate"}, exitError, "accepts 1 arg(s)"},
		{[]string{"topology", "validate", "skew-1.37", "--kubernetes-version", "1.39.0"}, exitError, "ndfq has no oracle for Kubernetes 1.39"},
		{[]string{"probe", "--baseline", "/nonexistent/report.json"}, exitError, "--baseline: open /nonexistent/report.json"},
		{[]string{"probe", "-o", "xml"}, exitError, `--output "xml": want text, json, yaml, markdown, junit or prometheus`},
		{[]string{"probe", "--qps", "0"}, exitError, "--qps 0: want more than 0"},
		{[]string{"probe", "--burst", "0"}, exitError, "--burst 0: want 1 or more"},
		{[]string{"probe", "--kubelet-sample", "-1"}, exitError, "--kubelet-sample -1: want 0"},
		{[]string{"probe", "--results-configmap", "r"}, exitError, `--results-configmap "r": give its namespace with -n`},
		{[]string{"probe", "--request-timeout", "soon"}, exitError, `--request-timeout "soon": want a duration`},
		{[]string{"probe", "--node-selector", "a in (b"}, exitError, `--node-selector "a in (b": `},
		{[]string{"probe", "--image", "Bad Image"}, exitError, `--image "Bad Image": `},
		{[]string{"probe", "--tolerations", "gpu:Never"}, exitError, `--tolerations: toleration "gpu:Never": effect "Never" is not NoSchedule`},
		{[]string{"probe", "--scheduler-name", "Not_A_Name"}, exitError, `--scheduler-name "Not_A_Name": `},
		{[]string{"probe", "--scheduler-name", "default-scheduler"}, exitError, `--scheduler-name "default-scheduler": given twice, or the default scheduler`},
		{[]string{"probe", "--scheduler-name", "a", "--scheduler-name", "a"}, exitError, `--scheduler-name "a": given twice`},
		{[]string{"probe", "-n", "Not_A_Namespace"}, exitError, `--namespace "Not_A_Namespace": `},
		{[]string{"probe", "--kubeconfig", bad + ".missing"}, exitError, "kubeconfig: "},
		{[]string{"probe", "--freshness", "0s"}, exitError, "--freshness 0s"},
		{[]string{"probe", "--max-missing-rate", "2"}, exitError, "--max-missing-rate 2"},
		{[]string{"probe", "--bogus"}, exitError, "unknown flag: --bogus"},
		{[]string{"probe", "--intent", bad}, exitError, "--intent: "},
		{[]string{"probe", "--intent", "nope"}, exitError, `--intent: no topology "nope"`},
		{[]string{"report", "summary", "--junit", filepath.Join(t.TempDir(), "none.xml")}, exitError, "none.xml"},
		{[]string{"report", "timing", "--top", "0"}, exitError, "--top 0: want 1 or more"},
		{[]string{"report", "timing", "--json", bad}, exitError, "not a Ginkgo JSON report"},
		{[]string{"report", "claims", "--topology", "alpha-1.35"}, exitOK, "not applicable: kube-apiserver has RestartAllContainersOnContainerExits off in this topology"},
		{[]string{"report", "claims", "--topology", "alpha-1.35"}, exitOK, "topology alpha-1.35: 54 cells apply, 48 not applicable, 0 not covered"},
		{[]string{"report", "claims", "-o", "markdown"}, exitOK, "| kubelet-admission · RestartAllContainersOnContainerExits | expect honoured | expect honoured | expect PodFeatureUnsupported |"},
		{[]string{"report", "claims", "-o", "json", "--topology", "next"}, exitOK, `"expect": "ignored"`},
		{[]string{"report", "claims", "-o", "yaml"}, exitError, `--output "yaml": want text, markdown or json`},
		{[]string{"images", "cache-plan", "--topology", "skew-1.37"}, exitOK, "v1.34.12\tndfq-bin-v1.34.12-"},
		{[]string{"images", "cache-plan", "--topology", "skew-1.37", "--slots", "3", "-o", "github"}, exitError, "topology skew-1.37 builds 4 Kubernetes releases, more than the 3 cache slots"},
		{[]string{"images", "cache-plan", "-o", "yaml"}, exitError, `--output "yaml": want text or github`},
		{[]string{"report", "claims", "--topology", bad}, exitError, "invalid topology"},
		{[]string{"topology", "validate", typo}, exitError, "unrecognized feature gate: NodeDeclaredFeaturez (Kubernetes 1.37 has no gate of that name; did you mean NodeDeclaredFeatures?)"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := run(context.Background(), c.args, &out, &errOut)
		all := out.String() + errOut.String()
		if code != c.code || !strings.Contains(all, c.want) {
			t.Errorf("ndfq %s: exit %d, want %d with %q; said:\n%s", strings.Join(c.args, " "), code, c.code, c.want, all)
		}
	}
}

func TestIntervalOverridesAreCheckedFirst(t *testing.T) {
	t.Setenv("NDFQ_INTERVAL_WAIT_NODS", "10m,5s")
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"topology", "validate", "skew-1.37"}, &out, &errOut); code != exitError || !strings.Contains(errOut.String(), "NDFQ_INTERVAL_WAIT_NODS names no interval") {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
	// version waits for nothing: it answers whatever the environment says.
	if code := run(context.Background(), []string{"version"}, &out, &errOut); code != exitOK {
		t.Errorf("version: exit %d: %s", code, errOut.String())
	}
}

func TestReportSummaryExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	passed := write("pass.xml", `<testsuites><testsuite><testcase name="[It] a" status="passed"></testcase></testsuite></testsuites>`)
	failed := write("fail.xml", `<testsuites><testsuite><testcase name="[It] a" status="failed"><failure message="Unexpected error:&#xA;    restart kubelet: exit status 1"></failure>`+
		`<system-err>  STEP: the safe order&#xA;  n-1: restarting its kubelet&#xA;  [FAILED] in [It]&#xA;  STEP: restore&#xA;</system-err></testcase></testsuite></testsuites>`)
	none := write("none.xml", `<testsuites><testsuite><testcase name="[It] a" status="skipped"><skipped></skipped></testcase></testsuite></testsuites>`)
	for path, want := range map[string]int{passed: exitOK, failed: exitVerdict, none: exitIncomplete} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"report", "summary", "--junit", path}, &out, &errOut); code != want {
			t.Errorf("%s: exit %d, want %d (%s%s)", filepath.Base(path), code, want, out.String(), errOut.String())
		}
		if path == failed {
			want := "FAILED [It] a\n  Unexpected error:\n      restart kubelet: exit status 1\n  | STEP: the safe order\n  | n-1: restarting its kubelet\ne2e: 0 passed, 1 failed, 0 skipped\n"
			if out.String() != want {
				t.Errorf("summary of a failure:\n%s\nwant:\n%s", out.String(), want)
			}
		}
	}
}

// A green JUnit with a report.md that is not GO fails CI, saying why
// before the count, which stays the last line.
func TestReportSummaryAsksReportMD(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "junit.xml")
	_ = os.WriteFile(junit, []byte(`<testsuites><testsuite><testcase name="[It] a" status="passed"></testcase></testsuite></testsuites>`), 0o644)
	for body, want := range map[string]int{
		"# ndfq report: skew-1.37 — GO\n": exitOK,
		"# ndfq report: skew-1.37 — INCOMPLETE\n\n## Not every claim was asked\n\n- no observation of the placement claim on pool a for F (expected refused)\n": exitIncomplete,
		"# ndfq report: skew-1.37 — HOLD\n\n## Why HOLD\n\n- trust observation on [a] F did not hold: expected 403, seen 200\n\n## Pools\n":                     exitVerdict,
	} {
		md := filepath.Join(dir, "report.md")
		_ = os.WriteFile(md, []byte(body), 0o644)
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"report", "summary", "--junit", junit, "--report", md}, &out, &errOut); code != want {
			t.Errorf("exit %d, want %d: %s%s", code, want, out.String(), errOut.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if lines[len(lines)-1] != "e2e: 1 passed, 0 failed, 0 skipped" || (want != exitOK && !strings.Contains(out.String(), "did not hold") && !strings.Contains(out.String(), "no observation")) {
			t.Errorf("output:\n%s", out.String())
		}
	}
}
