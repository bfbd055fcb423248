package kubeversion

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]Version{"1.37.2": "v1.37.2", "v1.35.4": "v1.35.4", "1.38.0-beta.0": "v1.38.0-beta.0"} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1.37", "2.0.0", "latest", "1.37.x"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if MustParse("1.38.0-beta.0").Minor() != "1.38" {
		t.Error("minor of a pre-release")
	}
}

func TestMinors(t *testing.T) {
	if MinorOf("1.37.2") != "1.37" || MinorOf("v1.36") != "1.36" || MinorOf("x") != "" {
		t.Error("MinorOf")
	}
	if PreviousMinor("1.38") != "1.37" || PreviousMinor("1.0") != "1.0" {
		t.Error("PreviousMinor")
	}
	if d, ok := MinorsBehind("1.34.4", "v1.37.2"); !ok || d != 3 {
		t.Errorf("MinorsBehind = %d %v", d, ok)
	}
	if d, _ := MinorsBehind("1.38", "1.37"); d != -1 {
		t.Errorf("newer kubelet: %d", d)
	}
	if !MinorLess("1.9", "1.10") || MinorLess("1.37", "1.37") {
		t.Error("MinorLess must compare numbers, not strings")
	}
	if Compare("v1.38.0-beta.0", "v1.38.0") >= 0 {
		t.Error("a pre-release sorts before its release")
	}
}
