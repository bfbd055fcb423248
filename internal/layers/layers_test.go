// Package layers holds the design card's one-way imports: oracle →
// topology → claims → bring-up → probes → verdict → report → specs →
// commands. A package may import its own layer and the ones before it,
// never a later one.
package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/ndfq/ndfq/"

// order lists each layer's packages, first layer first: "a" is package a
// and those under it, "a/" only those under it.
var order = [][]string{
	{"internal/"},
	{"fixtures"},
	{"clusters/topology", "clusters"}, // clusters itself embeds the topology files
	{"claims"},
	{"clusters/"},
	{"probes"},
	{"verdict"},
	{"report"},
	{"e2e"},
	// The version and release helpers print the oracle's minors.
	{"internal/buildinfo", "internal/release"},
	{"cmd/", "hack/"},
}

// layer is the index in order of the longest entry that names pkg.
func layer(pkg string) int {
	best, at := -1, -1
	for i, entries := range order {
		for _, e := range entries {
			names := pkg == e || strings.HasPrefix(pkg, e+"/")
			if strings.HasSuffix(e, "/") {
				names = strings.HasPrefix(pkg, e)
			}
			if names && len(e) > best {
				best, at = len(e), i
			}
		}
	}
	return at
}

func TestNothingImportsUpward(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-tags", "e2e", "-f", `{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	packages := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(fields[0], module)
		from := layer(pkg)
		if from < 0 {
			t.Errorf("package %s is in no layer: add it to order", pkg)
			continue
		}
		packages++
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			if to := layer(dep); to > from {
				t.Errorf("%s (layer %v) imports %s (layer %v), a later layer", pkg, order[from], dep, order[to])
			}
		}
	}
	if packages < 10 {
		t.Fatalf("only %d packages listed:\n%s", packages, out)
	}
}

func TestLayerOf(t *testing.T) {
	for pkg, want := range map[string]int{"clusters/topology": 2, "clusters": 2, "clusters/lifecycle": 4, "claims": 3, "fixtures/upstream": 1, "internal/wait": 0, "internal/release": 9, "e2e/framework": 8, "cmd/ndfq": 10} {
		if got := layer(pkg); got != want {
			t.Errorf("%s: layer %d, want %d", pkg, got, want)
		}
	}
}
