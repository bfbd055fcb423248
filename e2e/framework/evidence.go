package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// evidence is what the running spec touched: the namespaces it made and
// the nodes it operated on. A failure dumps exactly those.
type evidence struct {
	mu         sync.Mutex
	namespaces []string
	nodes      []string
	files      []string // written before the spec (a pass's evidence)
	dumped     bool
}

func (v *evidence) file(path string) {
	v.mu.Lock()
	v.files = append(v.files, path)
	v.mu.Unlock()
}

func (v *evidence) namespace(ns string) {
	v.mu.Lock()
	v.namespaces = append(v.namespaces, ns)
	v.mu.Unlock()
}

func (v *evidence) node(name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !slices.Contains(v.nodes, name) {
		v.nodes = append(v.nodes, name)
	}
}

// Evidence stages: at the failure, before any DeferCleanup repairs the
// cluster; and after cleanup, for failures that happen in the cleanup itself.
const (
	AtFailure    = "at-failure"
	AfterCleanup = "after-cleanup"
)

// StartSpec forgets the previous spec's namespaces and nodes.
func (e *Env) StartSpec() { e.evidence = &evidence{} }

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// SpecDir is ARTIFACTS/specs/<spec>: one folder per spec.
func (e *Env) SpecDir(spec string) string {
	name := unsafeChars.ReplaceAllString(spec, "_")
	if len(name) > 150 {
		name = name[:150]
	}
	return filepath.Join(e.Settings.Artifacts, "specs", name)
}

// DumpEvidence writes, into SpecDir(spec)/<stage> (never over an earlier
// dump), every node's YAML, every event, the pods of the spec's
// namespaces and the kubelet journal of each node the spec touched.
func (e *Env) DumpEvidence(ctx context.Context, spec, stage string) (string, error) {
	dir := filepath.Join(e.SpecDir(spec), stage)
	for i := 2; ; i++ {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			break
		}
		dir = filepath.Join(e.SpecDir(spec), fmt.Sprintf("%s-%d", stage, i))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return dir, err
	}
	e.evidence.mu.Lock()
	e.evidence.dumped = true
	namespaces, touched, files := slices.Clone(e.evidence.namespaces), slices.Clone(e.evidence.nodes), slices.Clone(e.evidence.files)
	e.evidence.mu.Unlock()
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if nodes, err := e.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		for i := range nodes.Items {
			n := nodes.Items[i]
			n.ManagedFields = nil
			keep(writeYAML(filepath.Join(dir, "node-"+n.Name+".yaml"), n))
		}
	} else {
		keep(err)
	}
	if events, err := e.Clientset.CoreV1().Events("").List(ctx, metav1.ListOptions{}); err == nil {
		keep(writeYAML(filepath.Join(dir, "events.yaml"), events))
	} else {
		keep(err)
	}
	for _, ns := range namespaces {
		if pods, err := e.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
			keep(writeYAML(filepath.Join(dir, "pods-"+ns+".yaml"), pods))
		} else {
			keep(err)
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		keep(err)
		keep(os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644))
	}
	for _, name := range touched {
		node, err := e.Cluster.KindNode(name)
		if err != nil {
			keep(err)
			continue
		}
		var out bytes.Buffer
		keep(node.Command("journalctl", "-u", "kubelet", "--no-pager", "-n", "400").SetStdout(&out).Run())
		keep(os.WriteFile(filepath.Join(dir, "kubelet-"+name+".log"), out.Bytes(), 0o644))
	}
	if len(errs) > 0 {
		return dir, fmt.Errorf("dumping evidence: %v", errs)
	}
	return dir, nil
}

// DumpIfFailed dumps the spec's evidence at stage when it has failed and
// nothing was dumped yet; it never fails the spec itself.
func (e *Env) DumpIfFailed(ctx context.Context, stage string) {
	r := CurrentSpecReport()
	if !r.Failed() || e.evidence.dumped {
		return
	}
	MarkFailed(e.Settings.Artifacts)
	dir, err := e.DumpEvidence(ctx, r.FullText(), stage)
	if err != nil {
		GinkgoWriter.Printf("%v\n", err)
	}
	GinkgoWriter.Printf("evidence (%s) dumped to %s\n", stage, dir)
}

func writeYAML(path string, obj any) error {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, data, 0o644)
}
