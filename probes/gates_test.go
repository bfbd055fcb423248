package probes

import (
	"strings"
	"testing"
)

const kubeletMetrics = `# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.
# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name="NodeDeclaredFeatures",stage=""} 1
kubernetes_feature_enabled{name="RestartAllContainersOnContainerExits",stage="BETA"} 0
kubernetes_feature_enabled{name="InPlacePodVerticalScalingMemoryBackedVolumes",stage="ALPHA"} 0
# HELP other_metric x
# TYPE other_metric counter
other_metric 3
`

func TestGatesFromMetrics(t *testing.T) {
	g, err := GatesFromMetrics(strings.NewReader(kubeletMetrics))
	if err != nil {
		t.Fatal(err)
	}
	if !g.Enabled("NodeDeclaredFeatures") || g.Describe("NodeDeclaredFeatures") != "on (GA)" {
		t.Errorf("NDF: %s", g.Describe("NodeDeclaredFeatures"))
	}
	if g.Enabled("RestartAllContainersOnContainerExits") || !g.Known("RestartAllContainersOnContainerExits") || g.Describe("RestartAllContainersOnContainerExits") != "off (BETA)" {
		t.Errorf("RACOCE: %s", g.Describe("RestartAllContainersOnContainerExits"))
	}
	if g.Known("Nope") || g.Describe("Nope") != "unknown to this component" {
		t.Error("absent gate")
	}
	if len(g.Names()) != 3 {
		t.Errorf("names %v", g.Names())
	}
}

func TestGatesFromMetricsWithoutTheMetric(t *testing.T) {
	if _, err := GatesFromMetrics(strings.NewReader("other_metric 1\n")); err == nil || !strings.Contains(err.Error(), "no kubernetes_feature_enabled") {
		t.Fatalf("got %v", err)
	}
}
