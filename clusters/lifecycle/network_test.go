package lifecycle

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestConflistUsesThePodCIDR(t *testing.T) {
	data, err := conflist("10.244.3.0/24")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"subnet": "10.244.3.0/24"`) || !strings.Contains(string(data), `"type": "ptp"`) || !strings.Contains(string(data), `"type": "host-local"`) {
		t.Errorf("conflist:\n%s", data)
	}
}

func TestRoutesGoToEveryPeerOnly(t *testing.T) {
	all := []nodeNet{{"a", "172.18.0.2", "10.244.0.0/24"}, {"b", "172.18.0.3", "10.244.1.0/24"}, {"c", "172.18.0.4", "10.244.2.0/24"}}
	cmds := routeCommands(all[1], all)
	if len(cmds) != 2 {
		t.Fatalf("want a route per peer, got %v", cmds)
	}
	got := strings.Join([]string{strings.Join(cmds[0], " "), strings.Join(cmds[1], " ")}, "; ")
	if got != "ip route replace 10.244.0.0/24 via 172.18.0.2; ip route replace 10.244.2.0/24 via 172.18.0.4" {
		t.Errorf("routes %s", got)
	}
}
