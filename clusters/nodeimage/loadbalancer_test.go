package nodeimage

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ndfq/ndfq/clusters/topology"
)

// kindLoadBalancerSource reads a file of kind's internal loadbalancer
// package from the module ndfq builds with.
func kindLoadBalancerSource(t *testing.T, file string) string {
	t.Helper()
	dir, err := KindModuleDir(context.Background())
	if err != nil {
		t.Skipf("kind module not in reach: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pkg/cluster/internal/loadbalancer", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLoadBalancerImageIsKinds(t *testing.T) {
	src := kindLoadBalancerSource(t, "const.go")
	m := regexp.MustCompile(`const Image = "([^"]+)"`).FindStringSubmatch(src)
	if m == nil || m[1] != LoadBalancerImage {
		t.Fatalf("kind %s runs load balancer image %v; ndfq builds %s", kindVersion(), m, LoadBalancerImage)
	}
}

// kindTemplate is one of kind's Envoy config templates, rendered the way
// kind renders it for two control-plane nodes.
func kindTemplate(t *testing.T, name string) string {
	t.Helper()
	src := kindLoadBalancerSource(t, "config.go")
	m := regexp.MustCompile("(?s)const " + name + " = `(.*?)`").FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("kind's config.go has no %s", name)
	}
	out := m[1]
	out = regexp.MustCompile(`(?s)\{\{-? ?if \$?\.IPv6 -?\}\}.*?\{\{-? ?else -?\}\}(.*?)\{\{-? ?end ?\}\}`).ReplaceAllString(out, "$1")
	out = strings.ReplaceAll(out, "{{ .ControlPlanePort }}", "6443")
	endpoint := regexp.MustCompile(`(?s)\{\{- range .*?\}\}\n\{\{- \$hp := hostPort \$address \}\}(.*?)\{\{- end \}\}`)
	return endpoint.ReplaceAllStringFunc(out, func(block string) string {
		body := endpoint.FindStringSubmatch(block)[1]
		var all string
		for _, host := range []string{"ndfq-ha-control-plane", "ndfq-ha-control-plane2"} {
			all += strings.NewReplacer("{{ $hp.host }}", host, "{{ $hp.port }}", "6443").Replace(body)
		}
		return all
	})
}

// The stand-in reads the endpoints and the port out of what kind writes.
func TestEnvoyStandInServesKindsEndpoints(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	for file, tmpl := range map[string]string{"cds.yaml": "ProxyCDSConfigTemplate", "lds.yaml": "ProxyLDSConfigTemplate"} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(kindTemplate(t, tmpl)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "envoy")
	if err := os.WriteFile(script, envoyStandIn, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), "bash", script, "--render")
	cmd.Env = append(os.Environ(), "NDFQ_LB_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	cfg := string(out)
	for _, want := range []string{
		"bind *:6443",
		"balance roundrobin",
		"option httpchk GET /healthz",
		"server apiserver0 ndfq-ha-control-plane:6443\n",
		"server apiserver1 ndfq-ha-control-plane2:6443\n",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("haproxy config lacks %q:\n%s", want, cfg)
		}
	}
}

func TestPlanForHAControlPlaneBuildsTheLoadBalancer(t *testing.T) {
	for name, want := range map[string]bool{"ha-1.37": true, "skew-1.37": false} {
		top, err := topology.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := PlanFor(top).LoadBalancer; got != want {
			t.Errorf("%s: load balancer %t, want %t", name, got, want)
		}
	}
}
