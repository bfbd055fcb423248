// Package ci holds checks of ndfq's CI definition; it has no code.
package ci

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/topology"
)

const (
	workflowFile = "../../.github/workflows/e2e.yaml"
	releaseFile  = "../../.github/workflows/release.yaml"
)

type step struct {
	Name    string            `yaml:"name"`
	ID      string            `yaml:"id"`
	Uses    string            `yaml:"uses"`
	Run     string            `yaml:"run"`
	If      string            `yaml:"if"`
	Timeout int               `yaml:"timeout-minutes"`
	Env     map[string]string `yaml:"env"`
	With    map[string]string `yaml:"with"`
}

type workflow struct {
	On          yaml.Node `yaml:"on"`
	Permissions yaml.Node `yaml:"permissions"`
	Concurrency struct {
		CancelInProgress string `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Jobs map[string]struct {
		Timeout     int               `yaml:"timeout-minutes"`
		Permissions map[string]string `yaml:"permissions"`
		Env         map[string]string `yaml:"env"`
		Steps       []step            `yaml:"steps"`
	} `yaml:"jobs"`
}

func load(t *testing.T) (workflow, string) {
	t.Helper()
	return loadFile(t, workflowFile)
}

func loadFile(t *testing.T, file string) (workflow, string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(raw, &w); err != nil {
		t.Fatal(err)
	}
	return w, string(raw)
}

// Every action of every workflow is pinned by a full commit SHA, with its
// tag beside it.
func TestActionsArePinnedBySHA(t *testing.T) {
	for _, f := range []string{workflowFile, releaseFile} {
		t.Run(f, func(t *testing.T) { actionsArePinned(t, f) })
	}
}

func actionsArePinned(t *testing.T, file string) {
	_, raw := loadFile(t, file)
	uses := regexp.MustCompile(`uses:\s*(\S+)(.*)`)
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	n := 0
	for _, m := range uses.FindAllStringSubmatch(raw, -1) {
		n++
		if !pinned.MatchString(m[1]) || !strings.Contains(m[2], "# v") {
			t.Errorf("uses: %s%s — pin a 40-hex commit and name its tag in a comment", m[1], m[2])
		}
	}
	if n == 0 {
		t.Fatal("no uses: lines read")
	}
}

// Only pull requests cancel a run in progress.
func TestOnlyPullRequestsCancel(t *testing.T) {
	w, _ := load(t)
	if c := w.Concurrency.CancelInProgress; !strings.Contains(c, "github.event_name == 'pull_request'") {
		t.Errorf("concurrency.cancel-in-progress %q: cancel only pull requests", c)
	}
}

// The e2e job: root steps under sudo with the environment kept, suites as
// the runner; the cache saved even when the suites fail, before they run;
// timeouts ordered so Ginkgo writes its reports before anything kills it.
func TestE2EJobOnHostedRunners(t *testing.T) {
	w, _ := load(t)
	job, ok := w.Jobs["e2e"]
	if !ok {
		t.Fatal("no e2e job")
	}
	index := func(pred func(step) bool) int {
		for i, s := range job.Steps {
			if pred(s) {
				return i
			}
		}
		return -1
	}
	prepare := index(func(s step) bool { return strings.Contains(s.Run, "E2E_STEPS=prepare") })
	suites := index(func(s step) bool { return strings.Contains(s.Run, "E2E_STEPS=suites") })
	if prepare < 0 || suites < 0 || prepare > suites {
		t.Fatalf("want a prepare step (E2E_STEPS=prepare) before a suites step (E2E_STEPS=suites): %d, %d", prepare, suites)
	}
	if p := job.Steps[prepare]; !strings.Contains(p.Run, "sudo --preserve-env") || !strings.Contains(p.Run, `"PATH=$PATH"`) {
		t.Errorf("prepare step must run under sudo keeping the environment and PATH: %q", p.Run)
	}
	if s := job.Steps[suites]; strings.Contains(s.Run, "sudo") {
		t.Errorf("the suites run as the runner user: %q", s.Run)
	}
	// The hosted runner's budget is measured where it is spent.
	for _, i := range []int{prepare, suites} {
		if r := job.Steps[i].Run; !strings.Contains(r, "bin/ndfq host measure --json \"$ARTIFACTS/budget-") || !strings.Contains(r, "-- hack/ci/e2e.sh") {
			t.Errorf("step %q: run hack/ci/e2e.sh under `bin/ndfq host measure --json \"$ARTIFACTS/budget-...\"`: %q", job.Steps[i].Name, r)
		}
	}
	saves := 0
	for i, s := range job.Steps {
		if !strings.HasPrefix(s.Uses, "actions/cache/save@") {
			continue
		}
		saves++
		if i > suites || !strings.Contains(s.If, "always()") {
			t.Errorf("step %q: save the cache before the suites and with if: always()", s.Name)
		}
	}
	if saves == 0 {
		t.Error("no actions/cache/save step: a failing suite would throw the image build away")
	}
	for _, s := range job.Steps {
		if (strings.HasPrefix(s.Uses, "actions/upload-artifact@") || s.Name == "summary") && s.If != "always()" {
			t.Errorf("step %q must run always", s.Name)
		}
	}
	if job.Env["NDFQ_SCRATCH_GOCACHE"] != "true" {
		t.Error("e2e env NDFQ_SCRATCH_GOCACHE must be \"true\": a cold run keeps no Go build cache on the runner's small disk")
	}
	ginkgo, err := time.ParseDuration(job.Env["GINKGO_TIMEOUT"])
	if err != nil {
		t.Fatalf("e2e env GINKGO_TIMEOUT: %v", err)
	}
	suiteStep := time.Duration(job.Steps[suites].Timeout) * time.Minute
	prepStep := time.Duration(job.Steps[prepare].Timeout) * time.Minute
	jobTimeout := time.Duration(job.Timeout) * time.Minute
	// Ginkgo needs time after its timeout to write reports and tear down.
	if ginkgo+3*time.Minute > suiteStep {
		t.Errorf("GINKGO_TIMEOUT %s must end at least 3m before the suites step's %s", ginkgo, suiteStep)
	}
	if prepStep == 0 || prepStep+suiteStep+10*time.Minute > jobTimeout {
		t.Errorf("prepare %s + suites %s + 10m for the other steps must fit the job's %s", prepStep, suiteStep, jobTimeout)
	}
	if job.Timeout > 360 {
		t.Errorf("hosted runners stop jobs at 360 minutes, not %s", strconv.Itoa(job.Timeout))
	}
}

// The release runs on v* tags only, with no permission at the top and
// exactly contents and packages write for its job; it makes the release
// with make, checks the checksums, pushes with the workflow's own token and
// never on a pull request.
func TestReleaseWorkflow(t *testing.T) {
	w, raw := loadFile(t, releaseFile)
	var on struct {
		Push struct {
			Tags     []string `yaml:"tags"`
			Branches []string `yaml:"branches"`
		} `yaml:"push"`
	}
	if err := w.On.Decode(&on); err != nil || len(on.Push.Tags) != 1 || on.Push.Tags[0] != "v*" || len(on.Push.Branches) > 0 {
		t.Errorf("on: want push of v* tags alone, got %+v (%v)", on, err)
	}
	if strings.Contains(raw, "pull_request") {
		t.Error("a release never runs for a pull request")
	}
	var top map[string]string
	if err := w.Permissions.Decode(&top); err != nil || len(top) != 0 {
		t.Errorf("top-level permissions: want {}, got %v (%v)", top, err)
	}
	job, ok := w.Jobs["release"]
	if !ok || len(w.Jobs) != 1 {
		t.Fatalf("want one job, release; got %d jobs", len(w.Jobs))
	}
	want := map[string]string{"contents": "write", "packages": "write"}
	if len(job.Permissions) != len(want) {
		t.Errorf("release job permissions %v, want %v", job.Permissions, want)
	}
	for k, v := range want {
		if job.Permissions[k] != v {
			t.Errorf("release job permissions %v, want %v", job.Permissions, want)
		}
	}
	var runs strings.Builder
	for _, s := range job.Steps {
		runs.WriteString(s.Run + "\n")
		for _, v := range s.Env {
			if strings.Contains(v, "secrets.") && v != "${{ secrets.GITHUB_TOKEN }}" {
				t.Errorf("step %q uses %s: the workflow's own token only", s.Name, v)
			}
		}
	}
	for _, must := range []string{"make release ", "make release-push ", "gh release create", "docker login ghcr.io"} {
		if !strings.Contains(runs.String(), must) {
			t.Errorf("no step runs %q", must)
		}
	}
	if job.Timeout == 0 {
		t.Error("the release job needs a timeout-minutes")
	}
}

// The Kubernetes binaries are cached per release: every slot has a restore
// before the prepare step and a save after it, keyed by the plan's key of
// that release, and there are as many slots as the most releases any
// shipped topology builds (the plan step refuses more, --slots).
func TestBinariesAreCachedPerRelease(t *testing.T) {
	w, _ := load(t)
	job := w.Jobs["e2e"]
	var plan string
	restores, saves := map[string]int{}, map[string]int{}
	prepare := -1
	for i, s := range job.Steps {
		switch {
		case strings.Contains(s.Run, "images cache-plan"):
			plan = s.Run
		case strings.Contains(s.Run, "E2E_STEPS=prepare"):
			prepare = i
		}
		m := regexp.MustCompile(`bin_key_(\d+) != ''`).FindStringSubmatch(s.If)
		if m == nil {
			continue
		}
		if !strings.Contains(s.With["key"], "steps.key.outputs.bin_key_"+m[1]) || !strings.Contains(s.With["path"], "steps.key.outputs.bin_paths_"+m[1]) {
			t.Errorf("step %q: key and path of slot %s: %v", s.Name, m[1], s.With)
		}
		switch {
		case strings.HasPrefix(s.Uses, "actions/cache/restore@") && (prepare < 0):
			restores[m[1]]++
		case strings.HasPrefix(s.Uses, "actions/cache/save@") && prepare >= 0:
			saves[m[1]]++
		default:
			t.Errorf("step %q: a slot's restore comes before the prepare step and its save after it", s.Name)
		}
	}
	m := regexp.MustCompile(`--slots (\d+)`).FindStringSubmatch(plan)
	if m == nil {
		t.Fatalf("the cache-plan step must pass --slots: %q", plan)
	}
	slots, _ := strconv.Atoi(m[1])
	for i := range slots {
		if k := strconv.Itoa(i); restores[k] != 1 || saves[k] != 1 {
			t.Errorf("slot %d: %d restores, %d saves; want one of each", i, restores[k], saves[k])
		}
	}
	most := 0
	for _, name := range topology.Names() {
		tp, err := topology.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(nodeimage.PlanFor(tp).BinsByRelease()); n > most {
			most = n
		}
	}
	if slots < most {
		t.Errorf("%d slots, but a shipped topology builds %d releases", slots, most)
	}
}
